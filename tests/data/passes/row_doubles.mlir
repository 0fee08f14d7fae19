// out[i, j] = 2 * a[i, j], a and out n x m C arrays: each work-item walks a
// row, storing inside its loop
module {
  func.func @row_doubles(%a: memref<?xf32>, %out: memref<?xf32>, %n: index, %m: index) {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %two = arith.constant 2.0 : f32
    scf.parallel (%i) = (%c0) to (%n) step (%c1) {
      %row = arith.muli %i, %m : index
      scf.for %j = %c0 to %m step %c1 {
        %k = arith.addi %row, %j : index
        %x = memref.load %a[%k] : memref<?xf32>
        %y = arith.mulf %x, %two : f32
        memref.store %y, %out[%k] : memref<?xf32>
      }
      scf.reduce
    }
    return
  }
}
