// out[i + off] = i  for i = lb, lb + step, ... < ub (lb may be negative, step a run-time value)
module {
  func.func @offsets(%out: memref<?xi64>, %lb: index, %ub: index, %step: index, %off: index) {
    scf.parallel (%i) = (%lb) to (%ub) step (%step) {
      %k = arith.addi %i, %off : index
      %v = arith.index_cast %i : index to i64
      memref.store %v, %out[%k] : memref<?xi64>
      scf.reduce
    }
    return
  }
}
