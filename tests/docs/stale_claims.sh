#!/bin/bash
# Documentation must not fall behind the GPU runs committed under tests/gpu/logs:
#  1. No README.md (anywhere but build and log folders) and no docs/*.md may say "has (have) not
#     run on a GPU yet" in a paragraph that names an example a GPU log shows passing (`PASS
#     example NAME`, tests/gpu/e2e.sh), nor in that example's examples/NAME/README.md; nor in a
#     paragraph about map types while a tests/gpu/bpftime_maps.sh log says `all passed`.
#  2. Every examples/*/README.md of an example a GPU log shows passing has a "Real output" label,
#     and every such label names the device, the driver and a date of its own (not one in a log's
#     file name): "Real output (NVIDIA H100 80GB HBM3, driver 580.159.04, 2026-11-27; LOG)".
#  3. Every tests/gpu/logs/... path these files cite exists.
# It cannot pass on nothing: it needs at least one examples/*/README.md, one example passing in a
# log and one labeled output, and it checks itself on a copy of a README with a stale sentence
# added and one with its label's date removed (both must be caught).
# usage: tests/docs/stale_claims.sh [REPO]   (REPO: the repository root; default: this checkout)
set -u
root=${1:-$(cd "$(dirname "$0")/../.." && pwd)}
logs=$root/tests/gpu/logs
[ -d "$logs" ] || { echo "FAIL: no $logs: nothing to check the documentation against"; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# What the GPU logs show: examples that passed (plain files and .tgz archives).
{
	grep -rhoE '^PASS example [A-Za-z0-9_.-]+ ' "$logs" 2>/dev/null
	find "$logs" -name '*.tgz' -o -name '*.tar.gz' | while read -r a; do
		tar -xzOf "$a" 2>/dev/null | grep -aoE '^PASS example [A-Za-z0-9_.-]+ '
	done
} | awk '{print $3}' | sort -u >"$tmp/passed"
maps_passed=0
while read -r f; do
	grep -qx 'all passed' "$f" && { maps_passed=1; break; }
done < <(find "$logs" -type f -name '*bpftime_maps*')
npassed=$(wc -l <"$tmp/passed")
if [ "$npassed" = 0 ]; then
	echo "FAIL: no GPU log under tests/gpu/logs shows an example passing ('PASS example NAME')"
	exit 1
fi

# check_file FILE REL: the claims of one file (REL: its path in the repository); prints each
# failure, returns how many.
check_file() {
	local file=$1 rel=$2 n=0 para name ex=
	case $rel in examples/*/README.md) ex=${rel#examples/}; ex=${ex%/README.md} ;; esac
	# 1. stale "not run on a GPU yet" paragraphs (joined, lower case, spaces squeezed)
	while IFS= read -r para; do
		if [ -n "$ex" ] && grep -qxF "$ex" "$tmp/passed"; then
			echo "FAIL $rel: says '$(echo "$para" | grep -oE '[^.]*not run on a gpu yet[^.]*' | head -1)' but a GPU log shows example $ex passing"
			n=$((n + 1))
		fi
		while read -r name; do
			if printf '%s\n' "$para" | grep -qwiF -- "$name"; then
				echo "FAIL $rel: a paragraph names $name and says it has not run on a GPU, but a GPU log shows example $name passing"
				n=$((n + 1))
			fi
		done <"$tmp/passed"
		if [ $maps_passed = 1 ] && printf '%s\n' "$para" | grep -qi 'map type'; then
			echo "FAIL $rel: says bpftime's map types have not run on a GPU, but a tests/gpu/bpftime_maps.sh log says 'all passed'"
			n=$((n + 1))
		fi
	done < <(awk 'BEGIN { RS = "" } { gsub(/[ \t\n]+/, " "); print tolower($0) }' "$file" |
		grep -F 'not run on a gpu yet')
	# 2. labels of real output: device, driver, date
	if [ -n "$ex" ]; then
		local labels
		labels=$(awk 'BEGIN { RS = "" } /Real output/ { gsub(/[ \t\n]+/, " "); print }' "$file" |
			grep -o 'Real output.*')
		if [ -z "$labels" ] && grep -qxF "$ex" "$tmp/passed"; then
			echo "FAIL $rel: a GPU log shows example $ex passing but its README has no 'Real output' from it"
			n=$((n + 1))
		fi
		while IFS= read -r para; do
			[ -n "$para" ] || continue
			if ! printf '%s\n' "$para" | grep -qE '(H100|H200|A100|L40|NVIDIA|AMD|Radeon|Instinct)' ||
				! printf '%s\n' "$para" | grep -qE 'driver [0-9]' ||
				! printf '%s\n' "$para" | grep -qE '(^|[ (,;])20[0-9][0-9]-[01][0-9]-[0-3][0-9]([ ,;)]|$)'; then
				echo "FAIL $rel: real output labeled without device, driver and date: '${para:0:140}'"
				n=$((n + 1))
			else
				labeled=$((labeled + 1))
			fi
		done <<<"$labels"
	fi
	# 3. cited logs exist
	while read -r cited; do
		cited=${cited%%[.:,;]}
		[ -e "$root/$cited" ] || { echo "FAIL $rel: cites $cited, which is not in the repository"; n=$((n + 1)); }
	done < <(grep -oE 'tests/gpu/logs/[A-Za-z0-9_./+-]*' "$file" | sort -u)
	return $((n > 100 ? 100 : n))
}

# The files: README.md anywhere but build output, logs and carried data; docs/*.md.
find "$root" \( -name .git -o -name 'build' -o -name 'build-*' -o -name .carry -o -name shared \
	-o -path "$logs" -o -name node_modules \) -prune -o -name README.md -type f -print |
	sort >"$tmp/files"
ls "$root"/docs/*.md 2>/dev/null >>"$tmp/files"
nex=$(grep -c "^$root/examples/[^/]*/README.md\$" "$tmp/files")
if [ "$nex" = 0 ]; then
	echo "FAIL: no examples/*/README.md under $root: nothing to check"
	exit 1
fi
fails=0 checked=0 labeled=0
while read -r f; do
	check_file "$f" "${f#"$root"/}"
	fails=$((fails + $?)) checked=$((checked + 1))
done <"$tmp/files"
if [ $labeled = 0 ]; then
	echo "FAIL: no examples/*/README.md shows a labeled real output"
	fails=$((fails + 1))
fi

# The check catches what it is for: a passing example's README with a stale sentence added, and
# one whose label lost its date.
ex=$(while read -r f; do
	e=${f#"$root"/examples/}; e=${e%/README.md}
	[ "$e" != "$f" ] && grep -qxF "$e" "$tmp/passed" && grep -q 'Real output' "$f" && { echo "$e"; break; }
done < <(grep "^$root/examples/[^/]*/README.md\$" "$tmp/files"))
if [ -n "$ex" ]; then
	l0=$labeled
	{ cat "$root/examples/$ex/README.md"; printf '\nThe real output is recorded later: it has not run\non a GPU yet.\n'; } >"$tmp/stale.md"
	if (check_file "$tmp/stale.md" "examples/$ex/README.md" >/dev/null); then
		echo "FAIL: self-check: a stale 'not run on a GPU yet' in examples/$ex/README.md was not caught"
		fails=$((fails + 1))
	fi
	sed -E 's/(Real output.*)20[0-9][0-9]-[01][0-9]-[0-3][0-9]/\1(no date)/' "$root/examples/$ex/README.md" >"$tmp/nodate.md"
	if (check_file "$tmp/nodate.md" "examples/$ex/README.md" >/dev/null); then
		echo "FAIL: self-check: a real-output label without a date in examples/$ex/README.md was not caught"
		fails=$((fails + 1))
	fi
	labeled=$l0
else
	echo "FAIL: self-check: no passing example's README with a real output to check the check on"
	fails=$((fails + 1))
fi

echo "stale_claims: $checked files ($nex example READMEs, $labeled labeled outputs) against $npassed examples passing in GPU logs$([ $maps_passed = 1 ] && echo ' and bpftime_maps passing'): $fails failure(s)"
[ $fails = 0 ]
