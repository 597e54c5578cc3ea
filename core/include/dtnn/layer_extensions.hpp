// LayerExtensions: what the layers of one model share at build time beyond LayerBuildContext's
// own fields, each piece under a name the plugins that use it agree on. A family of layer plugins
// brings its own shared state (the sequence layers: SequenceContext, sequence_context.hpp) without
// a core edit: the type names its slot,
//
//   struct MyShared { static constexpr std::string_view kExtensionName = "my_family"; ... };
//
// and a layer's build asks for it:
//
//   MyShared* s = ctx.extensions.find<MyShared>();    // null while nobody made it
//   MyShared& t = ctx.extensions.shared<MyShared>();  // made on the first ask
//
// Copies of a context share the slots (a chain hands each layer a copy), so what one layer makes
// the layers after it find. A layer that opens a scope of its own for the layers it builds (an
// encoder and a decoder, each with its own sequences) gives them fork(): the slots so far, where
// set() then replaces one for that scope only. A slot holds one type: asking for it as another is
// an Error naming both (the name is the only key, which plugins of separate shared objects agree
// on).
#pragma once
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <typeinfo>
#include <utility>

#include "dtnn/error.hpp"

namespace dtnn {

class LayerExtensions {
 public:
  LayerExtensions() : slots_(std::make_shared<Slots>()) {}

  template <class T>
  T* find() const {
    const auto it = slots_->find(T::kExtensionName);
    if (it == slots_->end()) return nullptr;
    check<T>(it->second);
    return static_cast<T*>(it->second.value.get());
  }

  // The slot's value, default-constructed on the first ask.
  template <class T>
  T& shared() const {
    if (T* existing = find<T>()) return *existing;
    set(std::make_shared<T>());
    return *find<T>();
  }

  template <class T>
  void set(std::shared_ptr<T> value) const {
    (*slots_)[std::string(T::kExtensionName)] = Slot{typeid(T).name(), std::move(value)};
  }

  // A scope of its own: the slots so far, which set() replaces without touching this one's.
  LayerExtensions fork() const {
    LayerExtensions scope;
    *scope.slots_ = *slots_;
    return scope;
  }

 private:
  struct Slot {
    std::string type;  // typeid's name: the same text in every shared object
    std::shared_ptr<void> value;
  };
  using Slots = std::map<std::string, Slot, std::less<>>;

  template <class T>
  static void check(const Slot& slot) {
    if (slot.type != typeid(T).name())
      throw Error("layer extension '" + std::string(T::kExtensionName) + "' holds a " + slot.type +
                  ", asked for as a " + typeid(T).name());
  }

  // Shared by the copies of one context: a const context's layers still add to it.
  std::shared_ptr<Slots> slots_;
};

}  // namespace dtnn
