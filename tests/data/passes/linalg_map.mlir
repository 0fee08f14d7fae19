// the linalg form of an elementwise map: out = a * b
#id = affine_map<(d0) -> (d0)>
module {
  func.func @linalg_map(%a: memref<?xf32>, %b: memref<?xf32>, %out: memref<?xf32>) {
    linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel"]}
        ins(%a, %b : memref<?xf32>, memref<?xf32>) outs(%out : memref<?xf32>) {
    ^bb0(%x: f32, %y: f32, %o: f32):
      %m = arith.mulf %x, %y : f32
      linalg.yield %m : f32
    }
    return
  }
}
