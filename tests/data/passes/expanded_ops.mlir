// ops with no direct SPIR-V lowering, expanded by the spirv stage:
// e[i] = exp2(a[i]), t[i] = trunc(a[i]), c[i] = cbrt(a[i]), q[i] = floordiv(int(a[i] * 1000), d)
module {
  func.func @expanded_ops(%a: memref<?xf64>, %e: memref<?xf64>, %t: memref<?xf64>, %c: memref<?xf64>, %q: memref<?xi64>, %n: index, %d: i64) {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %k = arith.constant 1000.0 : f64
    scf.parallel (%i) = (%c0) to (%n) step (%c1) {
      %x = memref.load %a[%i] : memref<?xf64>
      %ex = math.exp2 %x : f64
      memref.store %ex, %e[%i] : memref<?xf64>
      %tx = math.trunc %x : f64
      memref.store %tx, %t[%i] : memref<?xf64>
      %cx = math.cbrt %x : f64
      memref.store %cx, %c[%i] : memref<?xf64>
      %xk = arith.mulf %x, %k : f64
      %xi = arith.fptosi %xk : f64 to i64
      %fq = arith.floordivsi %xi, %d : i64
      memref.store %fq, %q[%i] : memref<?xi64>
      scf.reduce
    }
    return
  }
}
