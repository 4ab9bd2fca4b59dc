// install_signal_cleanup(): the handler calls the library's async-signal-safe cleanup and _exits.
#include "signal_cleanup.hpp"

#include <unistd.h>

#include <csignal>

#include "format/atomic_output.hpp"

namespace rebox::cli {
namespace {

extern "C" void on_termination_signal(int signal_number) {
    remove_pending_outputs_from_signal();
    ::_exit(128 + signal_number);
}

}  // namespace

void install_signal_cleanup() {
    struct sigaction action {};
    action.sa_handler = on_termination_signal;
    sigemptyset(&action.sa_mask);
    sigaction(SIGINT, &action, nullptr);
    sigaction(SIGTERM, &action, nullptr);
    sigaction(SIGHUP, &action, nullptr);
}

}  // namespace rebox::cli
