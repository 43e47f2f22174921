// topk.hpp: keep the K best of a stream of items, deterministically.
//
// `Better(a, b)` must be a strict weak order meaning "a ranks before b" and must break every tie
// (e.g. score descending, then target id ascending), so the kept set and its order never depend on
// insertion order, thread count or batch boundaries. Several TopK of the same K can be merged (per
// thread, per GPU, per MPI rank) and give the same result as one TopK over all items.
#pragma once

#include <algorithm>
#include <cstddef>
#include <functional>
#include <utility>
#include <vector>

namespace warpsearch {

template <class T, class Better = std::less<T>>
class TopK {
 public:
  explicit TopK(std::size_t k, Better better = Better()) : k_(k), better_(std::move(better)) {}

  std::size_t capacity() const { return k_; }
  std::size_t size() const { return heap_.size(); }
  bool full() const { return heap_.size() >= k_; }

  // The worst item kept (only meaningful when size() > 0): a new item must beat it once full.
  const T& worst() const { return heap_.front(); }

  // True if `item` would be kept (cheap pre-check before building an expensive item).
  bool would_accept(const T& item) const { return k_ > 0 && (!full() || better_(item, heap_.front())); }

  // Offers an item; returns true if it was kept.
  bool push(T item) {
    if (!would_accept(item)) return false;
    if (full()) {
      std::pop_heap(heap_.begin(), heap_.end(), better_);
      heap_.back() = std::move(item);
    } else {
      heap_.push_back(std::move(item));
    }
    std::push_heap(heap_.begin(), heap_.end(), better_);  // max-heap on "worse": front is the worst
    return true;
  }

  void merge(const TopK& other) {
    for (const T& item : other.heap_) push(item);
  }

  // The kept items, best first. Leaves this TopK empty.
  std::vector<T> take_sorted() {
    std::vector<T> out = std::move(heap_);
    heap_.clear();
    std::sort(out.begin(), out.end(), better_);
    return out;
  }

 private:
  std::size_t k_;
  Better better_;
  std::vector<T> heap_;  // heap ordered by better_: front() is the worst kept item
};

}  // namespace warpsearch
