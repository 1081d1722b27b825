// Level 1: vector operations. Each template serves the S, D, C, Z (and mixed, such as
// Csscal or Scasum) entry points and their _64 forms.
#pragma once

#include "libs/cublas/api_common.h"

namespace mimic::cublas::impl {

template <typename T>
Level1Args level1_args(Level1Op op, int64_t n, const T* x, int64_t incx, const T* y = nullptr,
                       int64_t incy = 1) {
  Level1Args a;
  a.op = op;
  a.type = data_type<T>;
  a.scalar_type = a.type;
  a.n = n;
  a.x = const_cast<T*>(x);
  a.incx = incx;
  a.y = const_cast<T*>(y);
  a.incy = incy;
  return a;
}

// An operation that writes one result: with host pointers the call returns once it is there.
template <typename R> cublasStatus_t level1_result(Handle& handle, Level1Args a, R* result) {
  MIMIC_CUBLAS_REQUIRE(result);
  a.result = result;
  a.result_on_host = !handle.device_pointers();
  return handle.backend->level1(handle.target(), a);
}

template <typename T, typename Index>
cublasStatus_t iamax(cublasHandle_t h, int64_t n, const T* x, int64_t incx, Index* result) {
  return with_handle(h, [&](Handle& handle) {
    Level1Args a = level1_args(Level1Op::Amax, n, x, incx);
    a.result_64 = sizeof(Index) == 8;
    return level1_result(handle, a, result);
  });
}

template <typename T, typename Index>
cublasStatus_t iamin(cublasHandle_t h, int64_t n, const T* x, int64_t incx, Index* result) {
  return with_handle(h, [&](Handle& handle) {
    Level1Args a = level1_args(Level1Op::Amin, n, x, incx);
    a.result_64 = sizeof(Index) == 8;
    return level1_result(handle, a, result);
  });
}

template <typename T, typename R>
cublasStatus_t asum(cublasHandle_t h, int64_t n, const T* x, int64_t incx, R* result) {
  return with_handle(h, [&](Handle& handle) {
    return level1_result(handle, level1_args(Level1Op::Asum, n, x, incx), result);
  });
}

template <typename T, typename R>
cublasStatus_t nrm2(cublasHandle_t h, int64_t n, const T* x, int64_t incx, R* result) {
  return with_handle(h, [&](Handle& handle) {
    return level1_result(handle, level1_args(Level1Op::Nrm2, n, x, incx), result);
  });
}

template <typename T>
cublasStatus_t dot(cublasHandle_t h, int64_t n, const T* x, int64_t incx, const T* y, int64_t incy,
                   T* result) {
  return with_handle(h, [&](Handle& handle) {
    return level1_result(handle, level1_args(Level1Op::Dotu, n, x, incx, y, incy), result);
  });
}

template <typename T>
cublasStatus_t dotc(cublasHandle_t h, int64_t n, const T* x, int64_t incx, const T* y, int64_t incy,
                    T* result) {
  return with_handle(h, [&](Handle& handle) {
    return level1_result(handle, level1_args(Level1Op::Dotc, n, x, incx, y, incy), result);
  });
}

template <typename T>
cublasStatus_t axpy(cublasHandle_t h, int64_t n, const T* alpha, const T* x, int64_t incx, T* y,
                    int64_t incy) {
  return with_handle(h, [&](Handle& handle) {
    MIMIC_CUBLAS_REQUIRE(alpha);
    Level1Args a = level1_args(Level1Op::Axpy, n, x, incx, y, incy);
    a.alpha = scalar(handle, alpha);
    return handle.backend->level1(handle.target(), a);
  });
}

template <typename T>
cublasStatus_t copy(cublasHandle_t h, int64_t n, const T* x, int64_t incx, T* y, int64_t incy) {
  return with_handle(h, [&](Handle& handle) {
    return handle.backend->level1(handle.target(),
                                  level1_args(Level1Op::Copy, n, x, incx, y, incy));
  });
}

template <typename T>
cublasStatus_t swap(cublasHandle_t h, int64_t n, T* x, int64_t incx, T* y, int64_t incy) {
  return with_handle(h, [&](Handle& handle) {
    return handle.backend->level1(handle.target(),
                                  level1_args(Level1Op::Swap, n, x, incx, y, incy));
  });
}

// scal with an alpha of the vector's type, or real for a complex vector (Csscal, Zdscal).
template <typename T, typename A>
cublasStatus_t scal(cublasHandle_t h, int64_t n, const A* alpha, T* x, int64_t incx) {
  return with_handle(h, [&](Handle& handle) {
    MIMIC_CUBLAS_REQUIRE(alpha);
    Level1Args a = level1_args(Level1Op::Scal, n, x, incx);
    a.alpha = scalar(handle, alpha);
    a.scalar_type = data_type<A>;
    return handle.backend->level1(handle.target(), a);
  });
}

// rot with a real c and a real (Srot, Csrot) or complex (Crot) s.
template <typename T, typename C, typename S>
cublasStatus_t rot(cublasHandle_t h, int64_t n, T* x, int64_t incx, T* y, int64_t incy, const C* c,
                   const S* s) {
  return with_handle(h, [&](Handle& handle) {
    MIMIC_CUBLAS_REQUIRE(c && s);
    Level1Args a = level1_args(Level1Op::Rot, n, x, incx, y, incy);
    a.c = scalar(handle, c);
    a.s = scalar(handle, s);
    a.scalar_type = data_type<S>;
    return handle.backend->level1(handle.target(), a);
  });
}

template <typename T>
cublasStatus_t rotm(cublasHandle_t h, int64_t n, T* x, int64_t incx, T* y, int64_t incy,
                    const T* param) {
  return with_handle(h, [&](Handle& handle) {
    MIMIC_CUBLAS_REQUIRE(param);
    Level1Args a = level1_args(Level1Op::Rotm, n, x, incx, y, incy);
    a.param = param;
    if (!handle.device_pointers()) {
      // Host parameters are the caller's until the call returns: run it before returning.
      a.result_on_host = true;
    }
    return handle.backend->level1(handle.target(), a);
  });
}

template <typename T, typename C> cublasStatus_t rotg(cublasHandle_t h, T* a, T* b, C* c, T* s) {
  return with_handle(h, [&](Handle& handle) {
    MIMIC_CUBLAS_REQUIRE(a && b && c && s);
    RotgArgs r{false, data_type<T>, a, b, c, s, nullptr, !handle.device_pointers()};
    return handle.backend->rotg(handle.target(), r);
  });
}

template <typename T>
cublasStatus_t rotmg(cublasHandle_t h, T* d1, T* d2, T* x1, const T* y1, T* param) {
  return with_handle(h, [&](Handle& handle) {
    MIMIC_CUBLAS_REQUIRE(d1 && d2 && x1 && y1 && param);
    RotgArgs r{true, data_type<T>,       d1,    d2,
               x1,   const_cast<T*>(y1), param, !handle.device_pointers()};
    return handle.backend->rotg(handle.target(), r);
  });
}

} // namespace mimic::cublas::impl
