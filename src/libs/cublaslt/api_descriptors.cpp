#include "libs/cublaslt/api_descriptors.h"

#include "libs/common/handle_registry.h"
#include "libs/cublaslt/attributes.h"
#include "libs/cublaslt/descriptors.h"
#include "libs/cublaslt/failure.h"

#include <cstddef>
#include <mutex>
#include <string>
#include <vector>

namespace mimic::cublaslt {

Preference default_preference() {
  Preference p{};
  p.magic = Preference::cookie;
  p.reduction_scheme_mask = CUBLASLT_REDUCTION_SCHEME_MASK;
  p.min_alignment_a = p.min_alignment_b = p.min_alignment_c = p.min_alignment_d = 256;
  p.impl_mask = ~uint64_t(0);
  return p;
}

} // namespace mimic::cublaslt

namespace mimic::cublaslt::impl {
namespace {

#define MIMIC_LT_ATTR(name, field) {name, offsetof(Desc, field), sizeof(Desc::field)},

template <typename D> std::span<const AttributeSlot> slots_of();

template <> std::span<const AttributeSlot> slots_of<Layout>() {
  using Desc = Layout;
  static constexpr AttributeSlot slots[] = {
#include "libs/cublaslt/layout_attributes.def"
  };
  return slots;
}
template <> std::span<const AttributeSlot> slots_of<MatmulDesc>() {
  using Desc = MatmulDesc;
  static constexpr AttributeSlot slots[] = {
#include "libs/cublaslt/matmul_desc_attributes.def"
  };
  return slots;
}
template <> std::span<const AttributeSlot> slots_of<Preference>() {
  using Desc = Preference;
  static constexpr AttributeSlot slots[] = {
#include "libs/cublaslt/preference_attributes.def"
  };
  return slots;
}
template <> std::span<const AttributeSlot> slots_of<TransformDesc>() {
  using Desc = TransformDesc;
  static constexpr AttributeSlot slots[] = {
#include "libs/cublaslt/transform_desc_attributes.def"
  };
  return slots;
}
template <> std::span<const AttributeSlot> slots_of<EmulationDesc>() {
  using Desc = EmulationDesc;
  static constexpr AttributeSlot slots[] = {
#include "libs/cublaslt/emulation_desc_attributes.def"
  };
  return slots;
}

#undef MIMIC_LT_ATTR

template <typename D> const char* name_of() {
  if constexpr (std::is_same_v<D, Layout>)
    return "matrix layout";
  else if constexpr (std::is_same_v<D, MatmulDesc>)
    return "matmul descriptor";
  else if constexpr (std::is_same_v<D, Preference>)
    return "matmul preference";
  else if constexpr (std::is_same_v<D, TransformDesc>)
    return "matrix transform descriptor";
  else
    return "emulation descriptor";
}

// Descriptors made by cublasLt*Create, so that Destroy takes back only those. A destroyed
// descriptor keeps its storage (its cookie cleared) for the next Create of its type: a
// stale handle then reads memory that is still ours and is rejected, and the storage in use
// stays bounded by the most descriptors ever live at once.
template <typename D, typename Opaque> struct Created {
  libs::HandleRegistry<D> live;
  std::mutex mutex;
  std::vector<Opaque*> free;

  Opaque* take() {
    std::lock_guard lock(mutex);
    if (free.empty()) return new Opaque{};
    Opaque* storage = free.back();
    free.pop_back();
    return storage;
  }
  void give_back(Opaque* storage) {
    std::lock_guard lock(mutex);
    free.push_back(storage);
  }
};

template <typename D, typename Opaque> Created<D, Opaque>& created() {
  static auto* made = new Created<D, Opaque>; // outlives exit handlers
  return *made;
}

// Descriptors are set up in storage of the header's opaque type, as the caller's own
// (cublasLt*Init) would be.
template <typename D, typename Opaque, typename Init>
cublasStatus_t create(Opaque** out, Init&& init) {
  if (!out) return fail(CUBLAS_STATUS_INVALID_VALUE, "the output pointer is NULL");
  Opaque* storage = created<D, Opaque>().take();
  *storage = Opaque{};
  auto* d = reinterpret_cast<D*>(storage);
  init(*d);
  d->magic = D::cookie;
  created<D, Opaque>().live.add(d);
  *out = storage;
  return CUBLAS_STATUS_SUCCESS;
}

template <typename D, typename Init>
cublasStatus_t init_in_place(void* storage, size_t size, Init&& init) {
  if (!storage) return fail(CUBLAS_STATUS_INVALID_VALUE, std::string(name_of<D>()) + " is NULL");
  if (size < sizeof(D))
    return fail(CUBLAS_STATUS_ALLOC_FAILED, std::string(name_of<D>()) + " storage of " +
                                                std::to_string(size) + " bytes is too small (" +
                                                std::to_string(sizeof(D)) + " needed)");
  auto* d = static_cast<D*>(storage);
  *d = D{};
  init(*d);
  d->magic = D::cookie;
  return CUBLAS_STATUS_SUCCESS;
}

template <typename D, typename Opaque> cublasStatus_t destroy(Opaque* handle) {
  if (!handle) return CUBLAS_STATUS_SUCCESS;
  D* d = created<D, Opaque>().live.remove(handle);
  if (!d)
    return fail(CUBLAS_STATUS_INVALID_VALUE,
                std::string(name_of<D>()) + " is not one its Create made, or was destroyed");
  d->magic = 0;
  created<D, Opaque>().give_back(handle);
  return CUBLAS_STATUS_SUCCESS;
}
template <typename D> cublasStatus_t set(void* handle, int attr, const void* buf, size_t size) {
  D* d = live<D>(handle);
  if (!d)
    return fail(CUBLAS_STATUS_INVALID_VALUE, std::string(name_of<D>()) + " is not initialised");
  return set_attribute(d, slots_of<D>(), attr, buf, size, name_of<D>());
}

template <typename D>
cublasStatus_t get(const void* handle, int attr, void* buf, size_t size, size_t* written) {
  const D* d = live<D>(handle);
  if (!d)
    return fail(CUBLAS_STATUS_INVALID_VALUE, std::string(name_of<D>()) + " is not initialised");
  return get_attribute(d, slots_of<D>(), attr, buf, size, written, name_of<D>());
}

void init_layout(Layout& l, cudaDataType type, uint64_t rows, uint64_t cols, int64_t ld) {
  l.type = uint32_t(type);
  l.rows = rows;
  l.cols = cols;
  l.ld = ld;
  l.order = CUBLASLT_ORDER_COL;
  l.batch_count = 1;
}

void init_matmul_desc(MatmulDesc& d, cublasComputeType_t compute, cudaDataType_t scale) {
  d.compute_type = compute;
  d.scale_type = scale;
  d.pointer_mode = CUBLASLT_POINTER_MODE_HOST;
  d.transa = d.transb = d.transc = CUBLAS_OP_N;
  d.fill_mode = CUBLAS_FILL_MODE_FULL;
  d.epilogue = CUBLASLT_EPILOGUE_DEFAULT;
  d.aux_data_type = -1;
  d.bias_data_type = -1;
}

void init_preference(Preference& p) {
  p = default_preference();
}

void init_transform_desc(TransformDesc& d, cudaDataType scale) {
  d.scale_type = scale;
  d.pointer_mode = CUBLASLT_POINTER_MODE_HOST;
  d.transa = d.transb = CUBLAS_OP_N;
}

void init_emulation_desc(EmulationDesc& d) {
  d.special_values_support = 0xffff;
}

} // namespace

cublasStatus_t layout_create(cublasLtMatrixLayout_t* out, cudaDataType type, uint64_t rows,
                             uint64_t cols, int64_t ld) {
  return create<Layout>(out, [&](Layout& l) { init_layout(l, type, rows, cols, ld); });
}
cublasStatus_t layout_init(cublasLtMatrixLayout_t layout, size_t size, cudaDataType type,
                           uint64_t rows, uint64_t cols, int64_t ld) {
  return init_in_place<Layout>(layout, size,
                               [&](Layout& l) { init_layout(l, type, rows, cols, ld); });
}
cublasStatus_t layout_destroy(cublasLtMatrixLayout_t layout) {
  return destroy<Layout>(layout);
}
cublasStatus_t layout_set_attribute(cublasLtMatrixLayout_t layout,
                                    cublasLtMatrixLayoutAttribute_t attr, const void* buf,
                                    size_t size) {
  return set<Layout>(layout, attr, buf, size);
}
cublasStatus_t layout_get_attribute(cublasLtMatrixLayout_t layout,
                                    cublasLtMatrixLayoutAttribute_t attr, void* buf, size_t size,
                                    size_t* written) {
  return get<Layout>(layout, attr, buf, size, written);
}

cublasStatus_t matmul_desc_create(cublasLtMatmulDesc_t* out, cublasComputeType_t compute,
                                  cudaDataType_t scale) {
  return create<MatmulDesc>(out, [&](MatmulDesc& d) { init_matmul_desc(d, compute, scale); });
}
cublasStatus_t matmul_desc_init(cublasLtMatmulDesc_t desc, size_t size, cublasComputeType_t compute,
                                cudaDataType_t scale) {
  return init_in_place<MatmulDesc>(desc, size,
                                   [&](MatmulDesc& d) { init_matmul_desc(d, compute, scale); });
}
cublasStatus_t matmul_desc_destroy(cublasLtMatmulDesc_t desc) {
  return destroy<MatmulDesc>(desc);
}
cublasStatus_t matmul_desc_set_attribute(cublasLtMatmulDesc_t desc,
                                         cublasLtMatmulDescAttributes_t attr, const void* buf,
                                         size_t size) {
  return set<MatmulDesc>(desc, attr, buf, size);
}
cublasStatus_t matmul_desc_get_attribute(cublasLtMatmulDesc_t desc,
                                         cublasLtMatmulDescAttributes_t attr, void* buf,
                                         size_t size, size_t* written) {
  return get<MatmulDesc>(desc, attr, buf, size, written);
}

cublasStatus_t preference_create(cublasLtMatmulPreference_t* out) {
  return create<Preference>(out, init_preference);
}
cublasStatus_t preference_init(cublasLtMatmulPreference_t pref, size_t size) {
  return init_in_place<Preference>(pref, size, init_preference);
}
cublasStatus_t preference_destroy(cublasLtMatmulPreference_t pref) {
  return destroy<Preference>(pref);
}
cublasStatus_t preference_set_attribute(cublasLtMatmulPreference_t pref,
                                        cublasLtMatmulPreferenceAttributes_t attr, const void* buf,
                                        size_t size) {
  return set<Preference>(pref, attr, buf, size);
}
cublasStatus_t preference_get_attribute(cublasLtMatmulPreference_t pref,
                                        cublasLtMatmulPreferenceAttributes_t attr, void* buf,
                                        size_t size, size_t* written) {
  return get<Preference>(pref, attr, buf, size, written);
}

cublasStatus_t transform_desc_create(cublasLtMatrixTransformDesc_t* out, cudaDataType scale) {
  return create<TransformDesc>(out, [&](TransformDesc& d) { init_transform_desc(d, scale); });
}
cublasStatus_t transform_desc_init(cublasLtMatrixTransformDesc_t desc, size_t size,
                                   cudaDataType scale) {
  return init_in_place<TransformDesc>(desc, size,
                                      [&](TransformDesc& d) { init_transform_desc(d, scale); });
}
cublasStatus_t transform_desc_destroy(cublasLtMatrixTransformDesc_t desc) {
  return destroy<TransformDesc>(desc);
}
cublasStatus_t transform_desc_set_attribute(cublasLtMatrixTransformDesc_t desc,
                                            cublasLtMatrixTransformDescAttributes_t attr,
                                            const void* buf, size_t size) {
  return set<TransformDesc>(desc, attr, buf, size);
}
cublasStatus_t transform_desc_get_attribute(cublasLtMatrixTransformDesc_t desc,
                                            cublasLtMatrixTransformDescAttributes_t attr, void* buf,
                                            size_t size, size_t* written) {
  return get<TransformDesc>(desc, attr, buf, size, written);
}

cublasStatus_t emulation_desc_create(cublasLtEmulationDesc_t* out) {
  return create<EmulationDesc>(out, init_emulation_desc);
}
cublasStatus_t emulation_desc_init(cublasLtEmulationDesc_t desc, size_t size) {
  return init_in_place<EmulationDesc>(desc, size, init_emulation_desc);
}
cublasStatus_t emulation_desc_destroy(cublasLtEmulationDesc_t desc) {
  return destroy<EmulationDesc>(desc);
}
cublasStatus_t emulation_desc_set_attribute(cublasLtEmulationDesc_t desc,
                                            cublasLtEmulationDescAttributes_t attr, const void* buf,
                                            size_t size) {
  return set<EmulationDesc>(desc, attr, buf, size);
}
cublasStatus_t emulation_desc_get_attribute(cublasLtEmulationDesc_t desc,
                                            cublasLtEmulationDescAttributes_t attr, void* buf,
                                            size_t size, size_t* written) {
  return get<EmulationDesc>(desc, attr, buf, size, written);
}

} // namespace mimic::cublaslt::impl
