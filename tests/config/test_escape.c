/* Message text from files (ptx-frontend/escape.h): every byte outside printable ASCII as \xNN,
 * in place within the buffer, never half an escape, always terminated. */
#include "ptx-frontend/escape.h"
#include "check.h"

static void line(const char *in, size_t buflen, const char *want)
{
	char buf[64];
	snprintf(buf, sizeof(buf), "%s", in);
	gp_escape_line(buf, buflen);
	CHECK_STR(buf, want);
}

int main(void)
{
	line("plain text", 64, "plain text");
	line("\x1b[2Jx", 64, "\\x1b[2Jx");
	line("a\nb\tc\x7f", 64, "a\\x0ab\\x09c\\x7f");
	line("\x9b\xc3\xa9", 64, "\\x9b\\xc3\\xa9");   /* C1 CSI, and UTF-8 too */
	/* what does not fit is dropped from the end, never half an escape */
	line("ab\x1b", 6, "ab");
	line("ab\x1b", 7, "ab\\x1b");
	line("abcdef", 4, "abc");
	line("\x01", 1, "");

	char out[16];
	CHECK_EQ(gp_escape(out, sizeof(out), "k\x00z", 3), 3);
	CHECK_STR(out, "k\\x00z");
	CHECK_EQ(gp_escape(out, 8, "\x01\x02\x03", 3), 1);   /* 4 + 4 > 7 */
	CHECK_STR(out, "\\x01");
	CHECK_DONE();
}
