// out[i] = tanh(a[i]) + atan2(a[i], s*s) + erf(a[i]) + floor(a[i]*s) + cos(a[i])
//          + log(1 + |a[i]|) + pow(|a[i]|, s) for lb <= i < ub;
// s*s is loop-invariant: hoisted to the host, then sunk back into the kernel
module {
  func.func @math_f64(%a: memref<?xf64>, %out: memref<?xf64>, %lb: index, %ub: index, %s: f64) {
    %c1 = arith.constant 1 : index
    %one = arith.constant 1.0 : f64
    scf.parallel (%i) = (%lb) to (%ub) step (%c1) {
      %x = memref.load %a[%i] : memref<?xf64>
      %ss = arith.mulf %s, %s : f64
      %t = math.tanh %x : f64
      %at = math.atan2 %x, %ss : f64
      %e = math.erf %x : f64
      %xs = arith.mulf %x, %s : f64
      %f = math.floor %xs : f64
      %c = math.cos %x : f64
      %ax = math.absf %x : f64
      %ax1 = arith.addf %ax, %one : f64
      %l = math.log %ax1 : f64
      %pw = math.powf %ax, %s : f64
      %r0 = arith.addf %t, %at : f64
      %r1 = arith.addf %r0, %e : f64
      %r2 = arith.addf %r1, %f : f64
      %r3 = arith.addf %r2, %c : f64
      %r4 = arith.addf %r3, %l : f64
      %r = arith.addf %r4, %pw : f64
      memref.store %r, %out[%i] : memref<?xf64>
      scf.reduce
    }
    return
  }
}
