// out[i] = sin(a[i]) * s + exp(b[i]) + sqrt(|a[i]|) + pow(b[i], 1.5) for lb <= i < ub
module {
  func.func @math_f32(%a: memref<?xf32>, %b: memref<?xf32>, %out: memref<?xf32>, %lb: index, %ub: index, %s: f32) {
    %c1 = arith.constant 1 : index
    %p = arith.constant 1.5 : f32
    scf.parallel (%i) = (%lb) to (%ub) step (%c1) {
      %x = memref.load %a[%i] : memref<?xf32>
      %y = memref.load %b[%i] : memref<?xf32>
      %sx = math.sin %x : f32
      %m = arith.mulf %sx, %s : f32
      %ey = math.exp %y : f32
      %ax = math.absf %x : f32
      %rx = math.sqrt %ax : f32
      %py = math.powf %y, %p : f32
      %t0 = arith.addf %m, %ey : f32
      %t1 = arith.addf %t0, %rx : f32
      %r = arith.addf %t1, %py : f32
      memref.store %r, %out[%i] : memref<?xf32>
      scf.reduce
    }
    return
  }
}
