#!/bin/sh
# fetch-model.sh puts silero_vad_v5.onnx (Silero VAD v5, MIT) into framewire's
# cache folder, where processors/audio/silero looks for it:
#   $FRAMEWIRE_SILERO_MODEL if set, else
#   ${XDG_CACHE_HOME:-~/.cache}/framewire/silero_vad_v5.onnx (~/Library/Caches on macOS).
# The file comes from the npm package @ricky0123/vad-web (pinned below, the
# same version as tools/silero-ref/package.json) through `npm pack`, and is
# checked against its SHA-256 before it is installed. Needs npm, tar and
# sha256sum (or shasum). Does nothing when the right file is already there.
set -eu

PACKAGE=@ricky0123/vad-web@0.0.31
SHA256=2623a2953f6ff3d2c1e61740c6cdb7168133479b267dfef114a4a3cc5bdd788f

if [ -n "${FRAMEWIRE_SILERO_MODEL:-}" ]; then
	dest=$FRAMEWIRE_SILERO_MODEL
elif [ "$(uname -s)" = Darwin ]; then
	dest=$HOME/Library/Caches/framewire/silero_vad_v5.onnx
else
	dest=${XDG_CACHE_HOME:-$HOME/.cache}/framewire/silero_vad_v5.onnx
fi

sha256() {
	if command -v sha256sum >/dev/null 2>&1; then
		sha256sum "$1" | cut -d' ' -f1
	else
		shasum -a 256 "$1" | cut -d' ' -f1
	fi
}

if [ -f "$dest" ] && [ "$(sha256 "$dest")" = "$SHA256" ]; then
	echo "silero: $dest is up to date"
	exit 0
fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
(cd "$tmp" && npm pack --silent "$PACKAGE" >/dev/null)
tar -xzf "$tmp"/*.tgz -C "$tmp" package/dist/silero_vad_v5.onnx
got=$(sha256 "$tmp/package/dist/silero_vad_v5.onnx")
if [ "$got" != "$SHA256" ]; then
	echo "silero: $PACKAGE ships silero_vad_v5.onnx with SHA-256 $got, want $SHA256" >&2
	exit 1
fi
mkdir -p "$(dirname "$dest")"
cp "$tmp/package/dist/silero_vad_v5.onnx" "$dest.tmp"
mv "$dest.tmp" "$dest"
echo "silero: installed $dest"
