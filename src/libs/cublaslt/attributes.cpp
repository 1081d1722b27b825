#include "libs/cublaslt/attributes.h"

#include "libs/cublaslt/failure.h"

#include <cstring>
#include <string>

namespace mimic::cublaslt {
namespace {

const AttributeSlot* find_slot(std::span<const AttributeSlot> slots, int attr) {
  for (const AttributeSlot& s : slots)
    if (s.attr == attr) return &s;
  return nullptr;
}

} // namespace

cublasStatus_t set_attribute(void* object, std::span<const AttributeSlot> slots, int attr,
                             const void* buf, size_t size, const char* what) {
  const AttributeSlot* slot = find_slot(slots, attr);
  if (!slot)
    return fail(CUBLAS_STATUS_INVALID_VALUE,
                std::string(what) + " attribute " + std::to_string(attr) + " is unknown");
  if (!buf || size != slot->size)
    return fail(CUBLAS_STATUS_INVALID_VALUE,
                std::string(what) + " attribute " + std::to_string(attr) + " takes " +
                    std::to_string(slot->size) + " bytes, not " + std::to_string(size) +
                    (buf ? "" : " (NULL buffer)"));
  std::memcpy(static_cast<char*>(object) + slot->offset, buf, size);
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t write_attribute(const void* value, size_t needed, void* buf, size_t size,
                               size_t* written, const char* what) {
  if (size == 0) {
    if (!written)
      return fail(CUBLAS_STATUS_INVALID_VALUE,
                  std::string(what) + ": size 0 asks for the size, but sizeWritten is NULL");
    *written = needed;
    return CUBLAS_STATUS_SUCCESS;
  }
  if (!buf || size != needed)
    return fail(CUBLAS_STATUS_INVALID_VALUE,
                std::string(what) + " takes " + std::to_string(needed) + " bytes, not " +
                    std::to_string(size) + (buf ? "" : " (NULL buffer)"));
  std::memcpy(buf, value, needed);
  if (written) *written = needed;
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t get_attribute(const void* object, std::span<const AttributeSlot> slots, int attr,
                             void* buf, size_t size, size_t* written, const char* what) {
  const AttributeSlot* slot = find_slot(slots, attr);
  if (!slot)
    return fail(CUBLAS_STATUS_INVALID_VALUE,
                std::string(what) + " attribute " + std::to_string(attr) + " is unknown");
  std::string name = std::string(what) + " attribute " + std::to_string(attr);
  return write_attribute(static_cast<const char*>(object) + slot->offset, slot->size, buf, size,
                         written, name.c_str());
}

} // namespace mimic::cublaslt
