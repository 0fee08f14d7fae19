// out[i] = mask[i] != 0 ? a[i] * k + a[i] / 3 - a[i] % 5 + i : i32(k32)  for lb <= i < ub
// (i64 array, i8 bool array, i64 and i32 scalars)
module {
  func.func @int64(%a: memref<?xi64>, %mask: memref<?xi8>, %out: memref<?xi64>, %lb: index, %ub: index, %k: i64, %k32: i32) {
    %c1 = arith.constant 1 : index
    %c3 = arith.constant 3 : i64
    %c5 = arith.constant 5 : i64
    %z8 = arith.constant 0 : i8
    scf.parallel (%i) = (%lb) to (%ub) step (%c1) {
      %x = memref.load %a[%i] : memref<?xi64>
      %m = memref.load %mask[%i] : memref<?xi8>
      %xk = arith.muli %x, %k : i64
      %q = arith.divsi %x, %c3 : i64
      %r = arith.remsi %x, %c5 : i64
      %ii = arith.index_cast %i : index to i64
      %s0 = arith.addi %xk, %q : i64
      %s1 = arith.subi %s0, %r : i64
      %s2 = arith.addi %s1, %ii : i64
      %alt = arith.extsi %k32 : i32 to i64
      %on = arith.cmpi ne, %m, %z8 : i8
      %v = arith.select %on, %s2, %alt : i64
      memref.store %v, %out[%i] : memref<?xi64>
      scf.reduce
    }
    return
  }
}
