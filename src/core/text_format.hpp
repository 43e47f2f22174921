// text_format.hpp: quoting for machine-readable text outputs (JSON strings, CSV fields), shared by the
// CLI's --json outputs, the result formatters and the benchmark harness.
#pragma once

#include <string>
#include <string_view>

namespace warpsearch {

// A JSON string literal: quotes, backslashes and control characters escaped (UTF-8 passes through).
std::string json_quote(std::string_view text);

// A CSV field (RFC 4180): quoted, with doubled quotes, when it holds a comma, quote, CR or LF.
std::string csv_field(std::string_view text);

}  // namespace warpsearch
