// out[(i*n1 + j)*n2 + k] = a[...] + k + 100*j + 10000*i  for 0 <= i < n0, lb1 <= j < n1, 0 <= k < n2
module {
  func.func @grid3d(%a: memref<?xi64>, %out: memref<?xi64>, %n0: index, %lb1: index, %n1: index, %n2: index) {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c100 = arith.constant 100 : index
    %c10000 = arith.constant 10000 : index
    scf.parallel (%k, %j, %i) = (%c0, %lb1, %c0) to (%n2, %n1, %n0) step (%c1, %c1, %c1) {
      %r0 = arith.muli %i, %n1 : index
      %r1 = arith.addi %r0, %j : index
      %r2 = arith.muli %r1, %n2 : index
      %p = arith.addi %r2, %k : index
      %x = memref.load %a[%p] : memref<?xi64>
      %t0 = arith.muli %j, %c100 : index
      %t1 = arith.muli %i, %c10000 : index
      %t2 = arith.addi %t0, %t1 : index
      %t3 = arith.addi %t2, %k : index
      %t = arith.index_cast %t3 : index to i64
      %v = arith.addi %x, %t : i64
      memref.store %v, %out[%p] : memref<?xi64>
      scf.reduce
    }
    return
  }
}
