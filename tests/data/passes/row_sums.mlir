// out[i] = sum(a[i, j] for j < m), a an n x m C array: each work-item walks a row
module {
  func.func @row_sums(%a: memref<?xf32>, %out: memref<?xf32>, %n: index, %m: index) {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %zero = arith.constant 0.0 : f32
    scf.parallel (%i) = (%c0) to (%n) step (%c1) {
      %row = arith.muli %i, %m : index
      %sum = scf.for %j = %c0 to %m step %c1 iter_args(%s = %zero) -> (f32) {
        %k = arith.addi %row, %j : index
        %x = memref.load %a[%k] : memref<?xf32>
        %t = arith.addf %s, %x : f32
        scf.yield %t : f32
      }
      memref.store %sum, %out[%i] : memref<?xf32>
      scf.reduce
    }
    return
  }
}
