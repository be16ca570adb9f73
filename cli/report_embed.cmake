# The HTML report's template (report_template.html) as a C string, for cli/report.c:
# cmake -DIN=report_template.html -DOUT=report_template.h -P report_embed.cmake
file(READ ${IN} hex HEX)
string(LENGTH "${hex}" n)
string(REGEX REPLACE "([0-9a-f][0-9a-f])" "0x\\1," body "${hex}")
math(EXPR bytes "${n} / 2")
file(WRITE ${OUT} "/* Generated from cli/report_template.html by cli/report_embed.cmake. */\n"
     "static const unsigned char report_template[] = {${body}0x00};\n"
     "#define REPORT_TEMPLATE_LEN ${bytes}\n")
