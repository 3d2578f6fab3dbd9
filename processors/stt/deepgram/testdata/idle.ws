# An idle session: only keep-alives until CloseStream.
