/* LLVM's side: targets, the optimisation pipeline, and what comes out (LLVM IR text, PTX through
 * the NVPTX backend, AMDGCN objects linked into code objects by ld.lld-19). */
#include "common/env.h"
#include "amdgpu/amdgpu.h"
#include "amdgpu/printf.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <setjmp.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <llvm-c/Analysis.h>
#include <llvm-c/Core.h>
#include <llvm-c/ErrorHandling.h>
#include <llvm-c/Target.h>
#include <llvm-c/TargetMachine.h>
#include <llvm-c/Transforms/PassBuilder.h>

extern char **environ;

LLVMModuleRef amdgpu__lower(LLVMContextRef ctx, const ir_module *m, const struct amdgpu_options *o,
			    const char *triple, const char *layout, char *err, size_t errlen);

/* LLVM ends the process on an error it cannot return (a pattern its instruction selection
 * cannot match). While code is generated, its fatal-error handler jumps back here instead, so a
 * module LLVM cannot compile is one error line, not a dead process; what LLVM had allocated in
 * that compilation is leaked. */
static __thread jmp_buf *fatal_jb;
static __thread char fatal_msg[256];

static void on_fatal(const char *reason)
{
	if (fatal_jb) {
		snprintf(fatal_msg, sizeof(fatal_msg), "%s", reason);
		char *nl = strchr(fatal_msg, '\n');
		if (nl)
			*nl = 0;
		longjmp(*fatal_jb, 1);
	}
	fprintf(stderr, "gpuprobe: LLVM: %s\n", reason);
	_exit(70);
}

/* LLVM's diagnostics (errors the backend reports and goes on from: an unsupported construct):
 * the first error is kept for the caller instead of LLVM's default, which ends the process. */
struct diag {
	char msg[256];
	int errors;
};

static void on_diag(LLVMDiagnosticInfoRef di, void *arg)
{
	struct diag *d = arg;
	if (LLVMGetDiagInfoSeverity(di) != LLVMDSError)
		return;
	if (!d->errors++) {
		char *m = LLVMGetDiagInfoDescription(di);
		snprintf(d->msg, sizeof(d->msg), "%s", m ? m : "?");
		char *nl = strchr(d->msg, '\n');
		if (nl)
			*nl = 0;
		LLVMDisposeMessage(m);
	}
}

static pthread_once_t init_once = PTHREAD_ONCE_INIT;
static void init_targets(void)
{
	LLVMInstallFatalErrorHandler(on_fatal);
	LLVMInitializeNVPTXTargetInfo();
	LLVMInitializeNVPTXTarget();
	LLVMInitializeNVPTXTargetMC();
	LLVMInitializeNVPTXAsmPrinter();
	LLVMInitializeAMDGPUTargetInfo();
	LLVMInitializeAMDGPUTarget();
	LLVMInitializeAMDGPUTargetMC();
	LLVMInitializeAMDGPUAsmPrinter();
}

int amdgpu_target_parse(const char *name)
{
	if (!name)
		return -1;
	if (!strcmp(name, "amdgcn") || !strcmp(name, "amdgcn-amd-amdhsa") || !strcmp(name, "amdgpu"))
		return AMDGPU_TARGET_AMDGCN;
	if (!strcmp(name, "nvptx") || !strcmp(name, "nvptx64") || !strcmp(name, "nvptx64-nvidia-cuda"))
		return AMDGPU_TARGET_NVPTX;
	return -1;
}

int amdgpu_arch_ok(enum amdgpu_target t, const char *arch)
{
	if (t == AMDGPU_TARGET_AMDGCN)
		return !strcmp(arch, "gfx90a") || !strcmp(arch, "gfx942") || !strcmp(arch, "gfx1100");
	if (strncmp(arch, "sm_", 3))
		return 0;
	char *end;
	long v = strtol(arch + 3, &end, 10);
	return v >= 60 && v <= 90 && (!*end || !strcmp(end, "a"));
}

static const char *arch_of(const struct amdgpu_options *o)
{
	if (o->arch)
		return o->arch;
	return o->target == AMDGPU_TARGET_AMDGCN ? "gfx90a" : "sm_80";
}

/* The target machine; NULL with err set. */
static LLVMTargetMachineRef machine(const struct amdgpu_options *o, const ir_module *m, char *err, size_t errlen)
{
	pthread_once(&init_once, init_targets);
	const char *triple = o->target == AMDGPU_TARGET_AMDGCN ? "amdgcn-amd-amdhsa" : "nvptx64-nvidia-cuda";
	const char *arch = arch_of(o);
	if (!amdgpu_arch_ok(o->target, arch)) {
		snprintf(err, errlen, "unknown architecture %s for %s (%s)", arch, triple,
			 o->target == AMDGPU_TARGET_AMDGCN ? "gfx90a, gfx942 or gfx1100" : "sm_60 .. sm_90");
		return NULL;
	}
	LLVMTargetRef t;
	char *msg = NULL;
	if (LLVMGetTargetFromTriple(triple, &t, &msg)) {
		snprintf(err, errlen, "LLVM has no %s target: %s", triple, msg ? msg : "?");
		LLVMDisposeMessage(msg);
		return NULL;
	}
	/* nvptx: the module's own PTX ISA version, at least 7.8 (what sm_90 needs) and at most 8.5
	 * (LLVM 19's newest): a kernel's parameters past 4352 bytes need 8.1 (LargeKernelParameter) */
	char features[16] = "";
	if (o->target == AMDGPU_TARGET_NVPTX) {
		unsigned maj = 0, min = 0, v = 78;
		if (m && m->version && sscanf(m->version, "%u.%u", &maj, &min) == 2 && maj * 10 + min > v)
			v = maj * 10 + min > 85 ? 85 : maj * 10 + min;
		snprintf(features, sizeof(features), "+ptx%u", v);
	}
	LLVMCodeGenOptLevel lvl = o->no_opt ? LLVMCodeGenLevelNone : LLVMCodeGenLevelDefault;
	return LLVMCreateTargetMachine(t, triple, arch, features, lvl, LLVMRelocPIC, LLVMCodeModelDefault);
}

/* Lower and optimise: the module (in ctx) or NULL. */
static LLVMModuleRef build(LLVMContextRef ctx, LLVMTargetMachineRef tm, const ir_module *m,
			   const struct amdgpu_options *o, char *err, size_t errlen)
{
	LLVMTargetDataRef td = LLVMCreateTargetDataLayout(tm);
	char *layout = LLVMCopyStringRepOfTargetData(td);
	char *triple = LLVMGetTargetMachineTriple(tm);
	LLVMModuleRef mod = amdgpu__lower(ctx, m, o, triple, layout, err, errlen);
	LLVMDisposeMessage(layout);
	LLVMDisposeMessage(triple);
	LLVMDisposeTargetData(td);
	if (!mod)
		return NULL;
	if (o->target == AMDGPU_TARGET_AMDGCN) {
		unsigned cov = o->cov ? o->cov : 5;
		LLVMAddModuleFlag(mod, LLVMModuleFlagBehaviorError, "amdhsa_code_object_version", 26,
				  LLVMValueAsMetadata(LLVMConstInt(LLVMInt32TypeInContext(ctx), cov * 100, 0)));
	}
	char *msg = NULL;
	if (LLVMVerifyModule(mod, LLVMReturnStatusAction, &msg)) {
		char *nl = msg ? strchr(msg, '\n') : NULL;
		if (nl)
			*nl = 0;
		snprintf(err, errlen, "internal error: the LLVM IR made is invalid: %s", msg ? msg : "?");
		LLVMDisposeMessage(msg);
		LLVMDisposeModule(mod);
		return NULL;
	}
	LLVMDisposeMessage(msg);
	LLVMPassBuilderOptionsRef po = LLVMCreatePassBuilderOptions();
	const char *passes = o->no_opt ? "function(sroa)" : o->opt_level == 3 ? "default<O3>" : o->opt_level == 1 ? "default<O1>" : "default<O2>";
	LLVMErrorRef e = LLVMRunPasses(mod, passes, tm, po);
	if (!e && o->target == AMDGPU_TARGET_AMDGCN) {
		/* CUDA's printf and assert, whose format strings optimisation made constants; then
		 * the %s arguments read back from vprintf's buffer become the strings themselves */
		int n = amdgpu_printf_lower(mod, o->cov ? o->cov : 5, err, errlen);
		if (n < 0) {
			LLVMDisposePassBuilderOptions(po);
			LLVMDisposeModule(mod);
			return NULL;
		}
		if (n > 0 && !(e = LLVMRunPasses(mod, "function(sroa,gvn,instcombine)", tm, po)))
			amdgpu_printf_strings(mod);
	}
	LLVMDisposePassBuilderOptions(po);
	if (e) {
		char *em = LLVMGetErrorMessage(e);
		snprintf(err, errlen, "LLVM passes: %s", em);
		LLVMDisposeErrorMessage(em);
		LLVMDisposeModule(mod);
		return NULL;
	}
	return mod;
}

int amdgpu_lower_ll(const ir_module *m, const struct amdgpu_options *o, char **ll, char *err, size_t errlen)
{
	LLVMTargetMachineRef tm = machine(o, m, err, errlen);
	if (!tm)
		return -EINVAL;
	LLVMContextRef ctx = LLVMContextCreate();
	LLVMModuleRef mod = build(ctx, tm, m, o, err, errlen);
	int r = -EINVAL;
	if (mod) {
		char *s = LLVMPrintModuleToString(mod);
		*ll = strdup(s);
		LLVMDisposeMessage(s);
		LLVMDisposeModule(mod);
		r = *ll ? 0 : -ENOMEM;
	}
	LLVMContextDispose(ctx);
	LLVMDisposeTargetMachine(tm);
	return r;
}

static int emit(const ir_module *m, const struct amdgpu_options *o, LLVMCodeGenFileType ft, void **out, size_t *len,
		char *err, size_t errlen)
{
	LLVMTargetMachineRef tm = machine(o, m, err, errlen);
	if (!tm)
		return -EINVAL;
	LLVMContextRef ctx = LLVMContextCreate();
	struct diag dg = {.errors = 0};
	LLVMContextSetDiagnosticHandler(ctx, on_diag, &dg);
	LLVMModuleRef mod = build(ctx, tm, m, o, err, errlen);
	int r = -EINVAL;
	if (mod) {
		LLVMMemoryBufferRef buf = NULL;
		char *msg = NULL;
		jmp_buf jb;
		if (setjmp(jb)) {
			fatal_jb = NULL;
			snprintf(err, errlen, "LLVM cannot compile this module for %s: %s",
				 o->target == AMDGPU_TARGET_AMDGCN ? "amdgcn" : "nvptx64", fatal_msg);
			return -EIO;   /* the module, context and machine are leaked: LLVM's state is unknown */
		}
		fatal_jb = &jb;
		int bad = LLVMTargetMachineEmitToMemoryBuffer(tm, mod, ft, &msg, &buf);
		fatal_jb = NULL;
		if (!bad && dg.errors) {
			LLVMDisposeMemoryBuffer(buf);
			snprintf(err, errlen, "LLVM cannot compile this module for %s: %s",
				 o->target == AMDGPU_TARGET_AMDGCN ? "amdgcn" : "nvptx64", dg.msg);
		} else if (bad) {
			snprintf(err, errlen, "LLVM code generation: %s", msg ? msg : "?");
			LLVMDisposeMessage(msg);
		} else {
			size_t n = LLVMGetBufferSize(buf);
			char *p = malloc(n + 1);
			if (p) {
				memcpy(p, LLVMGetBufferStart(buf), n);
				p[n] = 0;
				*out = p;
				*len = n;
				r = 0;
			} else {
				r = -ENOMEM;
			}
			LLVMDisposeMemoryBuffer(buf);
		}
		LLVMDisposeModule(mod);
	}
	LLVMContextDispose(ctx);
	LLVMDisposeTargetMachine(tm);
	return r;
}

int amdgpu_lower_ptx(const ir_module *m, const struct amdgpu_options *o, char **ptx, size_t *len, char *err,
		     size_t errlen)
{
	struct amdgpu_options x = *o;
	x.target = AMDGPU_TARGET_NVPTX;
	return emit(m, &x, LLVMAssemblyFile, (void **)ptx, len, err, errlen);
}

static const char *find_lld(void)
{
	const char *env = gp_env_str(GP_VAR_LD_LLD);
	if (env)
		return env;
	static const char *const cand[] = {"/usr/bin/ld.lld-19", "/usr/lib/llvm-19/bin/ld.lld", NULL};
	for (int i = 0; cand[i]; i++)
		if (access(cand[i], X_OK) == 0)
			return cand[i];
	return NULL;
}

static int write_all(const char *path, const void *p, size_t n)
{
	FILE *f = fopen(path, "wb");
	if (!f)
		return -1;
	size_t w = fwrite(p, 1, n, f);
	return fclose(f) || w != n ? -1 : 0;
}

int amdgpu_lower_code_object(const ir_module *m, const struct amdgpu_options *o, void **co, size_t *len, char *err,
			     size_t errlen)
{
	struct amdgpu_options x = *o;
	x.target = AMDGPU_TARGET_AMDGCN;
	if (x.cov && x.cov != 4 && x.cov != 5) {
		snprintf(err, errlen, "code-object version %u: 4 or 5", x.cov);
		return -EINVAL;
	}
	const char *lld = find_lld();
	if (!lld) {
		snprintf(err, errlen, "ld.lld-19 not found (apt-get install lld-19, or set GPUPROBE_LD_LLD)");
		return -ENOENT;
	}
	void *obj;
	size_t olen;
	int r = emit(m, &x, LLVMObjectFile, &obj, &olen, err, errlen);
	if (r < 0)
		return r;
	char dir[] = "/tmp/gpuprobe-amdgpu-XXXXXX";
	if (!mkdtemp(dir)) {
		free(obj);
		snprintf(err, errlen, "mkdtemp: %s", strerror(errno));
		return -errno;
	}
	char in[64], out[64], log[64];
	snprintf(in, sizeof(in), "%s/k.o", dir);
	snprintf(out, sizeof(out), "%s/k.co", dir);
	snprintf(log, sizeof(log), "%s/log", dir);
	r = write_all(in, obj, olen) ? -EIO : 0;
	free(obj);
	if (!r) {
		posix_spawn_file_actions_t fa;
		posix_spawn_file_actions_init(&fa);
		posix_spawn_file_actions_addopen(&fa, 1, log, O_WRONLY | O_CREAT | O_TRUNC, 0600);
		posix_spawn_file_actions_adddup2(&fa, 1, 2);
		char *argv[] = {(char *)lld, "-flavor", "gnu", "--no-undefined", "-shared", "-o", out, in, NULL};
		if (strstr(lld, "ld.lld"))
			memmove(&argv[1], &argv[3], 6 * sizeof(char *));
		pid_t pid;
		int st = 0;
		if (posix_spawn(&pid, lld, &fa, NULL, argv, environ) != 0 || waitpid(pid, &st, 0) < 0 ||
		    !WIFEXITED(st) || WEXITSTATUS(st)) {
			char msg[256] = "";
			FILE *f = fopen(log, "r");
			if (f) {
				if (!fgets(msg, sizeof(msg), f))
					msg[0] = 0;
				fclose(f);
			}
			msg[strcspn(msg, "\n")] = 0;
			snprintf(err, errlen, "%s failed: %s", lld, msg[0] ? msg : "no message");
			r = -EIO;
		}
		posix_spawn_file_actions_destroy(&fa);
	}
	if (!r) {
		FILE *f = fopen(out, "rb");
		if (!f) {
			r = -EIO;
		} else {
			fseek(f, 0, SEEK_END);
			long n = ftell(f);
			fseek(f, 0, SEEK_SET);
			void *p = malloc(n > 0 ? (size_t)n : 1);
			if (!p || fread(p, 1, (size_t)n, f) != (size_t)n) {
				free(p);
				r = -EIO;
			} else {
				*co = p;
				*len = (size_t)n;
			}
			fclose(f);
		}
	}
	unlink(in);
	unlink(out);
	unlink(log);
	rmdir(dir);
	return r;
}

int amdgpu_ptx_roundtrip(const char *ptx, size_t len, char **out, size_t *out_len, char *err, size_t errlen)
{
	char perr[512];
	ir_module *m = ptx_parse(ptx, len, perr, sizeof(perr));
	if (!m) {
		snprintf(err, errlen, "%s", perr);
		return -EINVAL;
	}
	struct amdgpu_options o = {.target = AMDGPU_TARGET_NVPTX, .whole_module = 1};
	const char *arch = gp_env_str(GP_VAR_LLVM_ARCH);
	if (arch)
		o.arch = arch;
	int r = amdgpu_lower_ptx(m, &o, out, out_len, err, errlen);
	ir_module_free(m);
	return r;
}
