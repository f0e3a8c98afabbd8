// sharebuf for ns-3 programs: the shared-buffer switch as queue discs (SharebufQueueDisc,
// SharebufSwitch), the facade behind them (SwitchFacade) and the sender's tag (SenderTag).
// Installed with the library (cmake --install); examples/ns3/ shows a program that uses it.
#pragma once

#include "sim/ns3/sender_tag.h"
#include "sim/ns3/sharebuf_queue_disc.h"
#include "sim/ns3/switch_facade.h"
