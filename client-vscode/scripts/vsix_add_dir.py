"""Adds a folder to a .vsix (a zip): vsix_add_dir.py VSIX FOLDER ARCNAME.

vsce packages bundled/libs (~6,500 files) in minutes on a small machine; a zip append takes
seconds. The [Content_Types].xml entry (the VSIX/OPC list of file types) gets the new extensions.
"""
import mimetypes
import os
import re
import shutil
import sys
import tempfile
import zipfile

CONTENT_TYPES = "[Content_Types].xml"


def main(vsix, folder, arcname):
    files = []
    for root, dirs, names in os.walk(folder):
        dirs[:] = sorted(d for d in dirs if d != "__pycache__")
        files += [os.path.join(root, n) for n in sorted(names) if not n.endswith(".pyc")]
    fd, tmp = tempfile.mkstemp(suffix=".vsix", dir=os.path.dirname(os.path.abspath(vsix)))
    os.close(fd)
    with zipfile.ZipFile(vsix) as src, zipfile.ZipFile(tmp, "w", zipfile.ZIP_DEFLATED, compresslevel=6) as out:
        types = src.read(CONTENT_TYPES).decode()
        known = {m.lower() for m in re.findall(r'Extension="([^"]+)"', types)}
        extra = sorted({os.path.splitext(f)[1].lower() for f in files} - known - {""})
        entries = "".join(
            f'<Default Extension="{ext}" ContentType="{mimetypes.guess_type("x" + ext)[0] or "application/octet-stream"}"/>'
            for ext in extra
        )
        for info in src.infolist():
            data = src.read(info)
            if info.filename == CONTENT_TYPES:
                data = types.replace("</Types>", entries + "</Types>").encode()
            out.writestr(info, data)
        for path in files:
            name = arcname + "/" + os.path.relpath(path, folder).replace(os.sep, "/")
            out.write(path, name)
    shutil.move(tmp, vsix)
    print(f"added {len(files)} files under {arcname}/ to {vsix}")


if __name__ == "__main__":
    main(*sys.argv[1:4])
