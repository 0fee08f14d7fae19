// out[i*n1 + j] = a[i*n1 + j] * s + j + 1000 * i  for lb0 <= i < n0, 0 <= j < n1
// (dimension 0 of the loop is j, the contiguous one)
module {
  func.func @grid2d(%a: memref<?xf32>, %out: memref<?xf32>, %lb0: index, %n0: index, %n1: index, %s: f32) {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c1000 = arith.constant 1000 : index
    scf.parallel (%j, %i) = (%c0, %lb0) to (%n1, %n0) step (%c1, %c1) {
      %row = arith.muli %i, %n1 : index
      %k = arith.addi %row, %j : index
      %x = memref.load %a[%k] : memref<?xf32>
      %y = arith.mulf %x, %s : f32
      %i1000 = arith.muli %i, %c1000 : index
      %tag = arith.addi %i1000, %j : index
      %tag64 = arith.index_cast %tag : index to i64
      %tagf = arith.sitofp %tag64 : i64 to f32
      %r = arith.addf %y, %tagf : f32
      memref.store %r, %out[%k] : memref<?xf32>
      scf.reduce
    }
    return
  }
}
