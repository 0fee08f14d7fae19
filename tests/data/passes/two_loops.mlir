// two launches in one function, one binary: b[i] = 2 * a[i], then c[i*n1 + j] = b[i*n1 + j] + 1
module {
  func.func @two_loops(%a: memref<?xf64>, %b: memref<?xf64>, %c: memref<?xf64>, %n0: index, %n1: index, %n: index) {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %two = arith.constant 2.0 : f64
    %one = arith.constant 1.0 : f64
    scf.parallel (%i) = (%c0) to (%n) step (%c1) {
      %x = memref.load %a[%i] : memref<?xf64>
      %y = arith.mulf %x, %two : f64
      memref.store %y, %b[%i] : memref<?xf64>
      scf.reduce
    }
    scf.parallel (%j, %i) = (%c0, %c0) to (%n1, %n0) step (%c1, %c1) {
      %row = arith.muli %i, %n1 : index
      %k = arith.addi %row, %j : index
      %x = memref.load %b[%k] : memref<?xf64>
      %y = arith.addf %x, %one : f64
      memref.store %y, %c[%k] : memref<?xf64>
      scf.reduce
    }
    return
  }
}
