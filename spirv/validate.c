/* SPIRV-Tools' validator and disassembler through its C API. */
#include "spirv/spirv.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <spirv-tools/libspirv.h>

int spirv_validate(const uint32_t *words, size_t nwords, char *err, size_t errlen)
{
	spv_context ctx = spvContextCreate(SPV_ENV_OPENCL_1_2);
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
	spv_context ctx = spvContextCreate(SPV_ENV_OPENCL_1_2);
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
