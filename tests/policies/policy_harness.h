// A small harness that drives a policy through the real admission step on a SharedBuffer, for
// model tests (DT steady state, static caps, CS fill) that need no threads and no clock.
#pragma once

#include <memory>
#include <vector>

#include "model/admission_step.h"
#include "policies/registry.h"
#include "tests/fixtures/buffer_fixture.h"

namespace sharebuf::testing {

class PolicyHarness : public BufferFixture {
 protected:
  void build(const buffer::BufferConfig& config, const std::string& policy,
             nlohmann::json params = nlohmann::json::object(),
             std::vector<policies::TrafficClass> classes = {}) {
    make_buffer(config);
    env_.layout = &buffer_->layout();
    env_.classes = std::move(classes);
    policies::Params p;
    p.values = std::move(params);
    policy_ = policies::make_policy(policy, p, env_);
    policy_->on_install(buffer_->exact_view());
    buffer_->set_policy_uses_probes(policy_->uses_probes(), now_);
  }

  // Offers one frame of `cells` cells to queue q; returns true if it was enqueued.
  bool offer(uint32_t q, uint32_t cells, uint8_t class_id = 0) {
    const uint32_t bytes = cells * buffer_->layout().cell_bytes();
    frame_.resize(bytes);
    const policies::ArrivalContext ctx{.now_ns = ++now_,
                                       .queue = q,
                                       .port = static_cast<uint16_t>(buffer_->layout().port_of(q)),
                                       .class_id = class_id,
                                       .cells = cells,
                                       .bytes = bytes};
    last_ = model::admit_frame(*policy_, *buffer_, *cache_,
                               model::ingress_view(*policy_, *buffer_, now_), ctx, frame_,
                               buffer::FrameMeta{.arrival_ns = now_, .class_id = class_id});
    return last_.enqueued;
  }

  // Removes the oldest frame of q and tells the policy, as an egress departure does (on_dequeue
  // with the exact view, after the cells are released); returns false if q was empty.
  bool depart(uint32_t q) {
    ++now_;
    buffer_->advance_probes(now_);
    const uint32_t head = buffer_->dequeue(q);
    if (head == buffer::kNoCell) return false;
    const buffer::PacketDescriptor d = buffer_->pool().descriptor(head);
    buffer_->release(*cache_, head);
    policy_->on_dequeue(
        policies::DequeueEvent{.now_ns = now_,
                               .queue = q,
                               .port = static_cast<uint16_t>(buffer_->layout().port_of(q)),
                               .class_id = d.class_id,
                               .cells = d.cells,
                               .bytes = d.bytes,
                               .sojourn_ns = now_ - d.arrival_ns},
        buffer_->exact_view());
    return true;
  }

  uint32_t occupancy(uint32_t q) const { return buffer_->state().queue_cells(q); }

  policies::PolicyEnv env_;
  std::unique_ptr<policies::Policy> policy_;
  model::AdmissionOutcome last_;
  std::vector<std::byte> frame_;
  uint64_t now_ = 0;
};

}  // namespace sharebuf::testing
