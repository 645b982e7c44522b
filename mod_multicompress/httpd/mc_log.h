// SPDX-License-Identifier: Apache-2.0
// Log message numbers: MC_LOGNO(00012) "..." gives "MC00012: ...". Numbers are never reused.
#pragma once

#define MC_LOGNO(n) "MC" #n ": "
