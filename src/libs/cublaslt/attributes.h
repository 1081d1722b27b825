// Attribute access shared by the descriptors and the algorithm configuration: a table of
// (enumerator, field offset, field size) per descriptor type, built from the
// *_attributes.def files; sizes are checked as cublasLt.h documents.
#pragma once

#include <cublasLt.h>

#include <cstddef>
#include <span>

namespace mimic::cublaslt {

struct AttributeSlot {
  int attr;
  size_t offset;
  size_t size;
};

// Copies `size` bytes from `buf` into the attribute's field of `object`: INVALID_VALUE for
// an unknown attribute, a NULL buffer or a size other than the field's.
cublasStatus_t set_attribute(void* object, std::span<const AttributeSlot> slots, int attr,
                             const void* buf, size_t size, const char* what);
// The reverse; with size 0 only *written (the size needed) is set.
cublasStatus_t get_attribute(const void* object, std::span<const AttributeSlot> slots, int attr,
                             void* buf, size_t size, size_t* written, const char* what);
// Writes `value` (size `needed`) for a getter whose value is computed, not stored.
cublasStatus_t write_attribute(const void* value, size_t needed, void* buf, size_t size,
                               size_t* written, const char* what);

} // namespace mimic::cublaslt
