// Indirect calls: a table of __device__ function pointers indexed by data, a pointer
// fetched by the host with cudaMemcpyFromSymbol and passed back as a kernel argument,
// and virtual functions of objects constructed on the device.
#include <vector>

#include "check.h"

typedef int (*op_t)(int, int);

__device__ int add(int a, int b) {
  return a + b;
}
__device__ int sub(int a, int b) {
  return a - b;
}
__device__ int mul(int a, int b) {
  return a * b;
}
__device__ int mix(int a, int b) {
  return (a ^ b) + (a & 7);
}

__device__ op_t table[4] = {add, sub, mul, mix};
__device__ op_t exported = mul;

struct Shape {
  __device__ virtual int area() const = 0;
  __device__ virtual ~Shape() {}
};
struct Rect : Shape {
  int w, h;
  __device__ Rect(int w_, int h_) : w(w_), h(h_) {}
  __device__ int area() const override { return w * h; }
};
struct Tri : Shape {
  int b, h;
  __device__ Tri(int b_, int h_) : b(b_), h(h_) {}
  __device__ int area() const override { return b * h / 2; }
};

__global__ void apply(const int* x, int* out, op_t from_host, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  op_t f = table[x[i] & 3];
  out[i * 3] = f(x[i], i);
  out[i * 3 + 1] = from_host(x[i], 3);
  Rect r(i % 7, 3);
  Tri t(i % 5, 4);
  const Shape* s = (x[i] & 4) ? static_cast<const Shape*>(&r) : &t;
  out[i * 3 + 2] = s->area();
}

int main() {
  const int n = 300;
  std::vector<int> x(n), out(n * 3), want(n * 3);
  for (int i = 0; i < n; ++i)
    x[i] = (i * 7919) % 1009;
  for (int i = 0; i < n; ++i) {
    int a = x[i], b = i;
    int r[4] = {a + b, a - b, a * b, (a ^ b) + (a & 7)};
    want[i * 3] = r[a & 3];
    want[i * 3 + 1] = a * 3;
    want[i * 3 + 2] = (a & 4) ? (i % 7) * 3 : (i % 5) * 4 / 2;
  }
  op_t from_host = nullptr;
  CHECK(cudaMemcpyFromSymbol(&from_host, exported, sizeof from_host));
  int *d_x, *d_out;
  CHECK(cudaMalloc(&d_x, n * sizeof(int)));
  CHECK(cudaMalloc(&d_out, out.size() * sizeof(int)));
  CHECK(cudaMemcpy(d_x, x.data(), n * sizeof(int), cudaMemcpyHostToDevice));
  apply<<<(n + 63) / 64, 64>>>(d_x, d_out, from_host, n);
  CHECK_LAUNCH();
  CHECK(cudaMemcpy(out.data(), d_out, out.size() * sizeof(int), cudaMemcpyDeviceToHost));
  expect_equal("indirect calls (table, host-passed, virtual)", out.data(), want.data(), out.size());
  return report("function_pointers");
}
