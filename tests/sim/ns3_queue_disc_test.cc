// SharebufQueueDisc as ns-3's own tools see it, in ns-3's test framework and through the public
// header only: installed with TrafficControlHelper and attributes alone, its QueueDisc accounting
// (GetStats, GetNPackets) and trace sources (Enqueue, Dequeue, Drop, Mark) report exactly what
// the switch counted, drops carry the policy's reasons, push-outs are drops after dequeue, and
// FlowMonitor sees every drop. Run against an ns-3 built with asserts (ctest label ns3debug),
// QueueDisc's own consistency checks run on every packet too.
#include <cstdint>
#include <map>
#include <string>

#include "ns3/applications-module.h"
#include "ns3/core-module.h"
#include "ns3/flow-monitor-helper.h"
#include "ns3/internet-module.h"
#include "ns3/ipv4-flow-probe.h"
#include "ns3/network-module.h"
#include "ns3/point-to-point-module.h"
#include "ns3/traffic-control-module.h"
#include "sim/ns3/sharebuf-module.h"

using namespace ns3;
using sharebuf::sim::SharebufQueueDisc;
using sharebuf::sim::SharebufSwitch;
using sharebuf::sim::SwitchFacade;

namespace {

// A star: hosts sinks..n-1 send UDP at `load` x line rate each to host h % sinks through one
// switch node
// whose ports are sharebuf queue discs configured by attributes; the packets are ECN-capable.
struct Star {
  NodeContainer hosts, sw;
  QueueDiscContainer discs;
  Ptr<FlowMonitor> monitor;
  FlowMonitorHelper flowmon;
  std::map<std::string, uint64_t> traced;

  Star(uint32_t n, uint32_t sinks, const std::string& policy, const std::string& buffer,
       double load) {
    hosts.Create(n);
    sw.Create(1);
    InternetStackHelper stack;
    stack.Install(hosts);
    stack.Install(sw);
    PointToPointHelper link;
    link.SetDeviceAttribute("DataRate", StringValue("1Gbps"));
    link.SetChannelAttribute("Delay", StringValue("5us"));
    TrafficControlHelper tch;
    tch.SetRootQueueDisc("sharebuf::SharebufQueueDisc", "Config",
                         StringValue("[[classes]]\nname = \"be\"\necn_threshold = \"30KB\"\n"),
                         "Policy", StringValue(policy), "BufferSize", StringValue(buffer));
    TrafficControlHelper host_tch;
    host_tch.SetRootQueueDisc("ns3::FifoQueueDisc", "MaxSize", StringValue("10000p"));
    Ipv4AddressHelper addr("198.18.0.0", "255.255.255.0");
    std::vector<Ipv4Address> ip;
    for (uint32_t h = 0; h < n; ++h) {
      NetDeviceContainer d = link.Install(hosts.Get(h), sw.Get(0));
      host_tch.Install(d.Get(0));
      discs.Add(tch.Install(d.Get(1)));
      ip.push_back(addr.Assign(d).GetAddress(0));
      addr.NewNetwork();
    }
    Ipv4GlobalRoutingHelper::PopulateRoutingTables();
    PacketSinkHelper sink("ns3::UdpSocketFactory", InetSocketAddress(Ipv4Address::GetAny(), 9));
    for (uint32_t h = 0; h < sinks; ++h)
      sink.Install(hosts.Get(h)).Start(Seconds(0));
    for (uint32_t h = sinks; h < n; ++h) {
      InetSocketAddress to(ip[h % sinks], 9);
      to.SetTos(0x02);  // ECT(0)
      OnOffHelper onoff("ns3::UdpSocketFactory", to);
      onoff.SetConstantRate(DataRate(static_cast<uint64_t>(load * 1e9)), 1000);
      ApplicationContainer app = onoff.Install(hosts.Get(h));
      app.Start(MicroSeconds(10 * h));
      app.Stop(MilliSeconds(20));
    }
    for (uint32_t i = 0; i < discs.GetN(); ++i) {
      Ptr<QueueDisc> q = discs.Get(i);
      for (const char* t : {"Enqueue", "Dequeue", "Drop"})
        q->TraceConnectWithoutContext(t, MakeBoundCallback(&Star::Counted, &traced[t]));
      for (const char* t : {"Mark", "DropBeforeEnqueue", "DropAfterDequeue"})
        q->TraceConnectWithoutContext(t, MakeBoundCallback(&Star::Tagged, &traced[t]));
    }
    monitor = flowmon.InstallAll();
    Simulator::Stop(MilliSeconds(40));
    Simulator::Run();
  }
  ~Star() { Simulator::Destroy(); }

  static void Counted(uint64_t* n, Ptr<const QueueDiscItem>) { ++*n; }
  static void Tagged(uint64_t* n, Ptr<const QueueDiscItem>, const char*) { ++*n; }

  SwitchFacade& Switch() { return sw.Get(0)->GetObject<SharebufSwitch>()->GetFacade(); }
};

class AccountingTestCase : public TestCase {
 public:
  AccountingTestCase()
      : TestCase("DT: GetStats, traces and FlowMonitor report what the switch did") {}

 private:
  void DoRun() override {
    Star star(5, 1, "dt", "200KB", 0.5);  // 4 x 0.5 Gbit/s into 1 Gbit/s
    SwitchFacade& f = star.Switch();
    uint64_t received = 0, enqueued = 0, dropped = 0, marked = 0, threshold = 0;
    for (uint32_t i = 0; i < star.discs.GetN(); ++i) {
      Ptr<SharebufQueueDisc> q = DynamicCast<SharebufQueueDisc>(star.discs.Get(i));
      NS_TEST_ASSERT_MSG_NE(q, nullptr, "a sharebuf queue disc");
      const QueueDisc::Stats& st = q->GetStats();
      const SwitchFacade::QueueCounters c = f.counters(q->GetPort(), 0);
      NS_TEST_ASSERT_MSG_EQ(st.nTotalReceivedPackets, c.received, "received, port " << i);
      NS_TEST_ASSERT_MSG_EQ(st.nTotalEnqueuedPackets, c.admitted, "enqueued, port " << i);
      NS_TEST_ASSERT_MSG_EQ(st.nTotalDroppedPacketsBeforeEnqueue, c.refused, "refused");
      NS_TEST_ASSERT_MSG_EQ(st.nTotalMarkedPackets, c.ecn_marked, "marked, port " << i);
      NS_TEST_ASSERT_MSG_EQ(st.nTotalDequeuedPackets + q->GetNPackets(), c.admitted,
                            "dequeued and still held, port " << i);
      NS_TEST_ASSERT_MSG_EQ(q->GetNInternalQueues(), 1u, "one internal queue a sharebuf queue");
      received += st.nTotalReceivedPackets;
      enqueued += st.nTotalEnqueuedPackets;
      dropped += st.nTotalDroppedPackets;
      marked += st.nTotalMarkedPackets;
      auto it = st.nDroppedPacketsBeforeEnqueue.find("threshold");
      if (it != st.nDroppedPacketsBeforeEnqueue.end()) threshold += it->second;
    }
    NS_TEST_ASSERT_MSG_GT(dropped, 100u, "the incast overflows DT's threshold");
    NS_TEST_ASSERT_MSG_EQ(threshold, dropped, "every drop is DT's threshold");
    NS_TEST_ASSERT_MSG_GT(marked, 100u, "the queue passes the ECN threshold");
    NS_TEST_ASSERT_MSG_EQ(star.traced["Enqueue"], enqueued, "Enqueue trace");
    NS_TEST_ASSERT_MSG_EQ(star.traced["Drop"], dropped, "Drop trace");
    NS_TEST_ASSERT_MSG_EQ(star.traced["DropBeforeEnqueue"], dropped, "DropBeforeEnqueue trace");
    NS_TEST_ASSERT_MSG_EQ(star.traced["Mark"], marked, "Mark trace");
    NS_TEST_ASSERT_MSG_EQ(star.traced["Dequeue"] + f.total_cells(), enqueued,
                          "Dequeue trace (the buffer drained)");
    uint64_t lost_in_disc = 0;
    for (const auto& [id, flow] : star.monitor->GetFlowStats()) {
      if (flow.packetsDropped.size() > Ipv4FlowProbe::DROP_QUEUE_DISC)
        lost_in_disc += flow.packetsDropped[Ipv4FlowProbe::DROP_QUEUE_DISC];
    }
    NS_TEST_ASSERT_MSG_EQ(lost_in_disc, dropped, "FlowMonitor's queue-disc drops");
    NS_TEST_ASSERT_MSG_GT(received, dropped, "some packets went through");
  }
};

class PushOutTestCase : public TestCase {
 public:
  PushOutTestCase() : TestCase("LQD: push-outs are drops after dequeue, reason pushed_out") {}

 private:
  void DoRun() override {
    // Two ports overloaded (2 x 0.8 Gbit/s into 1 Gbit/s each), the longer one pushed out.
    Star star(6, 2, "{name = \"lqd\"}", "100KB", 0.8);
    SwitchFacade& f = star.Switch();
    uint64_t pushed = 0, after = 0;
    for (uint32_t i = 0; i < star.discs.GetN(); ++i) {
      Ptr<SharebufQueueDisc> q = DynamicCast<SharebufQueueDisc>(star.discs.Get(i));
      const QueueDisc::Stats& st = q->GetStats();
      auto it = st.nDroppedPacketsAfterDequeue.find("pushed_out");
      const uint64_t here = it == st.nDroppedPacketsAfterDequeue.end() ? 0 : it->second;
      NS_TEST_ASSERT_MSG_EQ(here, f.counters(q->GetPort(), 0).pushed_out, "port " << i);
      NS_TEST_ASSERT_MSG_EQ(st.nTotalEnqueuedPackets - st.nTotalDequeuedPackets, q->GetNPackets(),
                            "held, port " << i);
      pushed += here;
      after += st.nTotalDroppedPacketsAfterDequeue;
    }
    NS_TEST_ASSERT_MSG_GT(pushed, 0u, "LQD pushed packets out");
    NS_TEST_ASSERT_MSG_EQ(after, pushed, "every drop after dequeue is a push-out");
    NS_TEST_ASSERT_MSG_EQ(star.traced["DropAfterDequeue"], pushed, "DropAfterDequeue trace");
  }
};

class SharebufQueueDiscTestSuite : public TestSuite {
 public:
  SharebufQueueDiscTestSuite() : TestSuite("sharebuf-queue-disc", UNIT) {
    AddTestCase(new AccountingTestCase, TestCase::QUICK);
    AddTestCase(new PushOutTestCase, TestCase::QUICK);
  }
};

SharebufQueueDiscTestSuite g_suite;

}  // namespace

int main(int argc, char** argv) {
  return TestRunner::Run(argc, argv);
}
