"""Map sanitizer offsets to the innermost source lines of the SASS (nvdisasm -gi)."""
import re, sys
sass = open(sys.argv[1]).read().splitlines()
offs = set()
for f in sys.argv[2:]:
    offs |= set(int(x, 16) for x in re.findall(r"\+0x([0-9a-f]+) in", open(f).read()))
loc = []
cur = []
for line in sass:
    m = re.search(r"//## File \"([^\"]+)\", line (\d+)(.*)", line)
    if m:
        cur = cur + [line.strip()] if "inlined at" in line else [line.strip()]
        continue
    m = re.search(r"/\*([0-9a-f]{4,})\*/\s*(.*?);", line)
    if m:
        loc.append((int(m.group(1), 16), m.group(2), list(cur)))
byoff = {o: (ins, c) for o, ins, c in loc}
for o in sorted(offs):
    print(f"== 0x{o:x}: {byoff.get(o, ('?', []))[0]}")
    for c in byoff.get(o, ("", []))[1][-6:]:
        print("   ", c[:220])
    # neighbours
    near = [x for x in loc if o - 0x40 <= x[0] <= o + 0x20]
    for x in near:
        print(f"   {x[0]:x}: {x[1][:90]}")
