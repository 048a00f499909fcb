/* libfuzzer_main.c -- the libFuzzer entry point (`make fuzz`, clang). */
#include <stddef.h>
#include <stdint.h>

#include "fuzz_session.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    return fuzz_session_one(data, size);
}
