// Errors caused by input (files, PTX text, API arguments) travel as values, never as
// exceptions. Result<T> holds either a value or an Error whose message names what went
// wrong and where.
#pragma once

#include <cassert>
#include <string>
#include <utility>
#include <variant>

namespace mimic {

class Error {
public:
  explicit Error(std::string message, int code = 0) : message_(std::move(message)), code_(code) {}
  const std::string& message() const { return message_; }
  // A caller-defined classification (for example the CUresult an API call returns); 0 when
  // the producer did not set one.
  int code() const { return code_; }

  // Adds context in front: "reading foo.so: <message>".
  Error context(const std::string& where) const { return Error(where + ": " + message_, code_); }

private:
  std::string message_;
  int code_ = 0;
};

template <typename T> class [[nodiscard]] Result {
public:
  Result(T value) : state_(std::move(value)) {}
  Result(Error error) : state_(std::move(error)) {}

  explicit operator bool() const { return state_.index() == 0; }
  bool ok() const { return state_.index() == 0; }

  T& value() & {
    assert(ok() && "Result::value() on an error");
    return std::get<0>(state_);
  }
  const T& value() const& {
    assert(ok() && "Result::value() on an error");
    return std::get<0>(state_);
  }
  T&& value() && {
    assert(ok() && "Result::value() on an error");
    return std::get<0>(std::move(state_));
  }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }

  const Error& error() const {
    assert(!ok() && "Result::error() on a value");
    return std::get<1>(state_);
  }

private:
  std::variant<T, Error> state_;
};

// For functions that produce nothing but may fail.
class [[nodiscard]] Status {
public:
  Status() = default;
  Status(Error error) : error_(std::move(error)), failed_(true) {}
  static Status success() { return Status(); }
  explicit operator bool() const { return !failed_; }
  bool ok() const { return !failed_; }
  const Error& error() const {
    assert(failed_ && "Status::error() on success");
    return error_;
  }

private:
  Error error_{""};
  bool failed_ = false;
};

} // namespace mimic
