// call_progress(): the progress callback with its exceptions turned into rebox::Error.
#include "progress_call.hpp"

#include <exception>
#include <string>

#include "rebox/error.hpp"

namespace rebox {

bool call_progress(const ProgressCallback& progress, const Progress& at) {
    try {
        return progress(at);
    } catch (const Error&) {
        throw;
    } catch (const std::exception& e) {
        throw Error(ExitClass::cancelled, "", "progress callback",
                    std::string("threw: ") + e.what() + "; the call stopped and removed its files");
    } catch (...) {
        throw Error(ExitClass::cancelled, "", "progress callback",
                    "threw something that is not a std::exception; the call stopped and removed "
                    "its files");
    }
}

}  // namespace rebox
