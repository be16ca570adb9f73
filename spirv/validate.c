/* SPIRV-Tools' validator and disassembler through its C API. */
#include "spirv/spirv.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <spirv-tools/libspirv.h>

/* OpenCL 2.0's rules (generic pointers). A module with 64-bit atomics needs the device extension
 * cl_khr_int64_base_atomics, which the OpenCL environments of the validator do not model: such a
 * module is checked against the universal rules instead. */
static spv_target_env env_for(const uint32_t *words, size_t nwords)
{
	for (size_t i = 5; i < nwords;) {
		uint32_t op = words[i] & 0xffff, len = words[i] >> 16;
		if (!len)
			break;
		if (op == 17 /* OpCapability */ && len == 2 && words[i + 1] == 12 /* Int64Atomics */)
			return SPV_ENV_UNIVERSAL_1_0;
		if (op != 17 && op != 10 && op != 11 && op != 14)
			break; /* past the capabilities */
		i += len;
	}
	return SPV_ENV_OPENCL_2_0;
}

int spirv_validate(const uint32_t *words, size_t nwords, char *err, size_t errlen)
{
	spv_context ctx = spvContextCreate(env_for(words, nwords));
	if (!ctx) {
		snprintf(err, errlen, "cannot create a SPIRV-Tools context");
		return -ENOMEM;
	}
	spv_diagnostic diag = NULL;
	spv_result_t r = spvValidateBinary(ctx, words, nwords, &diag);
	int ret = 0;
	if (r != SPV_SUCCESS) {
		snprintf(err, errlen, "SPIR-V validation failed: %s",
			 diag && diag->error ? diag->error : "(no message)");
		/* the validator's message spans lines; keep it to one */
		for (char *p = err; *p; p++)
			if (*p == '\n')
				*p = ' ';
		ret = -EINVAL;
	}
	spvDiagnosticDestroy(diag);
	spvContextDestroy(ctx);
	return ret;
}

char *spirv_disassemble(const uint32_t *words, size_t nwords)
{
	spv_context ctx = spvContextCreate(SPV_ENV_OPENCL_2_0);
	spv_text text = NULL;
	spv_diagnostic diag = NULL;
	char *out = NULL;
	if (spvBinaryToText(ctx, words, nwords,
			    SPV_BINARY_TO_TEXT_OPTION_FRIENDLY_NAMES | SPV_BINARY_TO_TEXT_OPTION_INDENT,
			    &text, &diag) == SPV_SUCCESS)
		out = strndup(text->str, text->length);
	else
		out = strdup(diag && diag->error ? diag->error : "disassembly failed");
	spvTextDestroy(text);
	spvDiagnosticDestroy(diag);
	spvContextDestroy(ctx);
	return out;
}
