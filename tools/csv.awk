# CSV reading for make bench's files, shared by the tools that read them (awk -f tools/csv.awk
# -f PROGRAM). Split one CSV line into f[1..n]; fields may be quoted and hold commas (no
# embedded quotes). Returns n.
function parse(line, f,    n, rest, q) {
    n = 0
    rest = line
    while (length(rest) > 0 || n == 0) {
        if (substr(rest, 1, 1) == "\"") {
            q = index(substr(rest, 2), "\"")
            f[++n] = substr(rest, 2, q - 1)
            rest = substr(rest, q + 3)
        } else {
            q = index(rest, ",")
            if (q == 0) { f[++n] = rest; rest = "" }
            else { f[++n] = substr(rest, 1, q - 1); rest = substr(rest, q + 1) }
        }
        if (rest == "" ) break
    }
    return n
}
