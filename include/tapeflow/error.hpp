// tapeflow/error.hpp - the exceptions tapeflow throws.
//
// Misuse of the API (a precondition the caller broke) throws
// tapeflow::usage_error, a std::logic_error. Failures of the environment
// (I/O, resources) throw tapeflow::error, a std::runtime_error. Every
// message starts with "tapeflow: ", says what happened and what to do.
#pragma once

#include <stdexcept>
#include <string>

namespace tapeflow {

/// The caller broke a documented precondition; fix the calling code.
class usage_error : public std::logic_error {
public:
    explicit usage_error(const std::string& what) : std::logic_error("tapeflow: " + what) {}
};

/// Something outside the caller's control failed (I/O, resources).
class error : public std::runtime_error {
public:
    explicit error(const std::string& what) : std::runtime_error("tapeflow: " + what) {}
};

}  // namespace tapeflow
