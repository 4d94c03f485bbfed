#!/usr/bin/env python3
"""Rebuild eval/clinical/documents/*.md and shared/tests/fixtures/clinical/*.md
from the public source files named in eval/clinical/SOURCES.tsv.

The source files are not part of this repository. Extract each one from its
repository at the commit given in SOURCES.tsv into one folder (file name = the
base name of the path), then run:

    python3 eval/clinical/make_documents.py SOURCE_DIR

The conversion only changes structure (XML elements -> Markdown headings,
lists, tables; hard-wrapped text joined into one line per paragraph; field
names of the ClinicalTrials.gov record as list labels); the wording of every
sentence is kept. Python 3 standard library only.
"""

import html
import json
import os
import re
import sys
import xml.etree.ElementTree as ET

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", ".."))
DOCS = os.path.join(HERE, "documents")
FIXTURES = os.path.join(ROOT, "shared", "tests", "fixtures", "clinical")


def ws(s):
    return re.sub(r"\s+", " ", s).strip()


# --------------------------------------------------------------------------
# FDA Structured Product Labeling (HL7 v3 XML) -> Markdown

V3 = "{urn:hl7-org:v3}"


def vtag(e):
    return e.tag.replace(V3, "")


def spl_inline(e, brk="\n"):
    out = [e.text or ""]
    for c in e:
        t = vtag(c)
        if t == "br":
            out.append(brk)
        elif t in ("footnote", "renderMultiMedia"):
            pass
        else:
            out.append(spl_inline(c, brk))
        out.append(c.tail or "")
    return "".join(out)


def spl_is_heading_para(p):
    """A paragraph that is nothing but one bold/underlined phrase without final
    punctuation acts as a run-in heading ("SERIOUS INFECTIONS", "Clinical Response")."""
    kids = list(p)
    if len(kids) != 1 or vtag(kids[0]) != "content":
        return False
    if (p.text or "").strip() or (kids[0].tail or "").strip():
        return False
    style = (kids[0].get("styleCode") or "").lower()
    text = ws(spl_inline(kids[0]))
    return (("bold" in style or "underline" in style) and 0 < len(text) <= 80
            and not text.endswith((".", ":", ";", ",")) and not re.match(r"(Figure|Table)\s+\d", text))


def spl_paragraph(p):
    """Paragraph text; '<br/>• item' runs become a Markdown list."""
    raw = spl_inline(p, "\n")
    lines = [ws(x) for x in raw.split("\n")]
    lines = [x for x in lines if x]
    if not lines:
        return ""
    blocks, para, items = [], [], []
    for x in lines:
        if x.startswith("•"):
            if para:
                blocks.append(" ".join(para))
                para = []
            items.append("- " + x.lstrip("•").strip())
        else:
            if items:
                blocks.append("\n".join(items))
                items = []
            para.append(x)
    if para:
        blocks.append(" ".join(para))
    if items:
        blocks.append("\n".join(items))
    return "\n\n".join(blocks)


def spl_table(tbl):
    rows = []
    for tr in tbl.iter(V3 + "tr"):
        cells = [ws(spl_inline(td, " ")).replace("|", "\\|") for td in tr if vtag(td) in ("td", "th")]
        if any(cells):
            rows.append(cells)
    if not rows:
        return ""
    n = max(len(r) for r in rows)
    rows = [r + [""] * (n - len(r)) for r in rows]
    lines = ["| " + " | ".join(rows[0]) + " |", "|" + "---|" * n]
    lines += ["| " + " | ".join(r) + " |" for r in rows[1:]]
    out = []
    cap = tbl.find(V3 + "caption")
    if cap is not None and ws(spl_inline(cap, " ")):
        out.append(ws(spl_inline(cap, " ")))
    out.append("\n".join(lines))
    return "\n\n".join(out)


def spl_list(lst, indent=""):
    ordered = lst.get("listType") == "ordered"
    lines = []
    n = 0
    for it in lst:
        if vtag(it) != "item":
            continue
        n += 1
        mark = f"{n}. " if ordered else "- "
        head = [it.text or ""]
        rest = []
        for c in it:
            if vtag(c) in ("list", "paragraph", "table") or rest:
                rest.append(c)
            else:
                head.append(spl_inline(c, " ") + (c.tail or ""))
        text = ws("".join(head))
        subs = []
        for c in rest:
            if vtag(c) == "paragraph":
                t = ws(spl_inline(c, " "))
                if t and not text:
                    text = t
                elif t:
                    subs.append(indent + "  " + t)
            elif vtag(c) == "list":
                subs.append(spl_list(c, indent + "  "))
        lines.append(indent + mark + text)
        lines.extend(subs)
    return "\n".join(lines)


def spl_blocks(e, out, level):
    for c in e:
        t = vtag(c)
        if t == "paragraph":
            if spl_is_heading_para(c):
                out.append("#" * min(level, 6) + " " + ws(spl_inline(c)))
            else:
                s = spl_paragraph(c)
                if s:
                    out.append(s)
        elif t == "list":
            out.append(spl_list(c))
        elif t == "table":
            s = spl_table(c)
            if s:
                out.append(s)
        elif t == "renderMultiMedia":
            pass
        else:
            spl_blocks(c, out, level)


def spl_section(sec, level, out):
    title = sec.find(V3 + "title")
    if title is not None and ws(spl_inline(title, " ")):
        out.append("#" * min(level, 6) + " " + re.sub(r"^(\d+(\.\d+)*)\s+", r"\1 ", ws(spl_inline(title, " "))))
    text = sec.find(V3 + "text")
    if text is not None:
        spl_blocks(text, out, level + 1)
    for comp in sec.findall(V3 + "component"):
        s = comp.find(V3 + "section")
        if s is not None:
            spl_section(s, level + 1, out)


def spl_to_md(path, title, keep, subsections=None):
    """keep: LOINC codes of the top-level sections to keep, in document order.
    subsections: {code: [title prefixes]} keeps only those subsections (and the
    section's own text) of a kept section."""
    root = ET.parse(path).getroot()
    body = root.find(f"{V3}component/{V3}structuredBody")
    out = ["# " + title]
    for comp in body.findall(V3 + "component"):
        sec = comp.find(V3 + "section")
        code = sec.find(V3 + "code").get("code")
        if code not in keep:
            continue
        if subsections and code in subsections:
            sec = prune_subsections(sec, subsections[code])
        spl_section(sec, 2, out)
    return "\n\n".join(out) + "\n"


def prune_subsections(sec, prefixes):
    import copy
    sec = copy.deepcopy(sec)
    for comp in list(sec.findall(V3 + "component")):
        s = comp.find(V3 + "section")
        t = ws(spl_inline(s.find(V3 + "title"), " ")) if s is not None and s.find(V3 + "title") is not None else ""
        if not any(t.startswith(p) for p in prefixes):
            sec.remove(comp)
    return sec


# --------------------------------------------------------------------------
# ClinicalTrials.gov records (legacy public XML and API v2 JSON) -> Markdown


def textblock(s):
    """A ClinicalTrials.gov text block (hard-wrapped, indented) -> Markdown."""
    s = s.replace("\r\n", "\n")
    paras = re.split(r"\n\s*\n", s.strip("\n"))
    out = []
    for p in paras:
        lines = [l for l in p.split("\n") if l.strip()]
        if not lines:
            continue
        first = lines[0].strip()
        m = re.match(r"^(\d+)\.\s+(.*)$", first) or re.match(r"^[-*]\s+(.*)$", first)
        if m and re.match(r"^\d+\.", first):
            out.append(("ol", int(m.group(1)), ws(" ".join([m.group(2)] + lines[1:]))))
        elif m:
            out.append(("ul", 0, ws(" ".join([m.group(1)] + lines[1:]))))
        else:
            out.append(("p", 0, ws(" ".join(lines))))
    # join consecutive list items into one list block
    blocks = []
    for kind, num, text in out:
        if text.startswith(">"):  # would open a block quote in Markdown
            text = "\\" + text
        if kind == "p":
            blocks.append(text)
        else:
            item = (f"{num}. " if kind == "ol" else "- ") + text
            if blocks and isinstance(blocks[-1], list) and blocks[-1][0] == kind:
                blocks[-1][1].append(item)
            else:
                blocks.append([kind, [item]])
    return "\n\n".join(b if isinstance(b, str) else "\n".join(b[1]) for b in blocks)


def ctgov_from_xml(path):
    root = ET.parse(path).getroot()

    def g(p):
        e = root.find(p)
        return e.text.strip() if e is not None and e.text else ""

    def tb(p):
        e = root.find(p)
        return textblock(e.text) if e is not None and e.text else ""

    rec = {
        "nct_id": g("id_info/nct_id"), "brief_title": g("brief_title"),
        "official_title": g("official_title"), "sponsor": g("sponsors/lead_sponsor/agency"),
        "brief_summary": tb("brief_summary/textblock"),
        "detailed_description": tb("detailed_description/textblock"),
        "study_type": g("study_type"), "phase": g("phase"),
        "enrollment": g("enrollment") + (f" ({root.find('enrollment').get('type')})" if root.find("enrollment") is not None and root.find("enrollment").get("type") else ""),
        "conditions": [c.text.strip() for c in root.findall("condition")],
        "design": [(k, g("study_design_info/" + t)) for k, t in (
            ("Allocation", "allocation"), ("Intervention model", "intervention_model"),
            ("Primary purpose", "primary_purpose"), ("Masking", "masking")) if g("study_design_info/" + t)],
        "arms": [(a.findtext("arm_group_label", "").strip(), a.findtext("arm_group_type", "").strip(),
                  ws(a.findtext("description", ""))) for a in root.findall("arm_group")],
        "interventions": [(i.findtext("intervention_type", "").strip(), i.findtext("intervention_name", "").strip(),
                           ws(i.findtext("description", "")), [o.text.strip() for o in i.findall("other_name")])
                          for i in root.findall("intervention")],
        "outcomes": [],
        "criteria": tb("eligibility/criteria/textblock"),
        "elig_fields": [(k, g("eligibility/" + t)) for k, t in (
            ("Sexes eligible", "gender"), ("Minimum age", "minimum_age"), ("Maximum age", "maximum_age"),
            ("Accepts healthy volunteers", "healthy_volunteers")) if g("eligibility/" + t)],
    }
    for kind, label in (("primary_outcome", "Primary"), ("secondary_outcome", "Secondary"), ("other_outcome", "Other")):
        for o in root.findall(kind):
            rec["outcomes"].append((label, ws(o.findtext("measure", "")), o.findtext("description", "") or "",
                                    ws(o.findtext("time_frame", ""))))
    return rec


ENUM = {
    "INTERVENTIONAL": "Interventional", "RANDOMIZED": "Randomized", "PARALLEL": "Parallel Assignment",
    "TREATMENT": "Treatment", "PHASE2": "Phase 2", "PHASE3": "Phase 3", "EXPERIMENTAL": "Experimental",
    "PLACEBO_COMPARATOR": "Placebo Comparator", "DRUG": "Drug", "ALL": "All", "ACTUAL": "Actual",
}


def ctgov_from_json(path):
    d = json.load(open(path, encoding="utf-8"))
    if "studies" in d:
        d = d["studies"][0]
    p = d["protocolSection"]
    idm, dm, de = p["identificationModule"], p.get("descriptionModule", {}), p.get("designModule", {})
    di = de.get("designInfo", {})
    mi = di.get("maskingInfo", {})
    masking = ""
    if mi:
        masking = mi["masking"].title() + " (" + ", ".join(w.replace("_", " ").title() for w in mi.get("whoMasked", [])) + ")"
    el = p.get("eligibilityModule", {})
    enr = de.get("enrollmentInfo", {})
    rec = {
        "nct_id": idm["nctId"], "brief_title": idm["briefTitle"], "official_title": idm.get("officialTitle", ""),
        "sponsor": p.get("sponsorCollaboratorsModule", {}).get("leadSponsor", {}).get("name", ""),
        "brief_summary": dm.get("briefSummary", ""), "detailed_description": dm.get("detailedDescription", ""),
        "study_type": ENUM.get(de.get("studyType"), de.get("studyType", "")),
        "phase": ", ".join(ENUM.get(x, x) for x in de.get("phases", [])),
        "enrollment": f"{enr['count']} ({ENUM.get(enr.get('type'), enr.get('type'))})" if enr else "",
        "conditions": p.get("conditionsModule", {}).get("conditions", []),
        "design": [(k, v) for k, v in (
            ("Allocation", ENUM.get(di.get("allocation"), di.get("allocation", ""))),
            ("Intervention model", ENUM.get(di.get("interventionModel"), di.get("interventionModel", ""))),
            ("Primary purpose", ENUM.get(di.get("primaryPurpose"), di.get("primaryPurpose", ""))),
            ("Masking", masking)) if v],
        "arms": [(a["label"], ENUM.get(a.get("type"), a.get("type", "")), a.get("description", ""))
                 for a in p.get("armsInterventionsModule", {}).get("armGroups", [])],
        "interventions": [(ENUM.get(i.get("type"), i.get("type", "")), i["name"], i.get("description", ""), i.get("otherNames", []))
                          for i in p.get("armsInterventionsModule", {}).get("interventions", [])],
        "outcomes": [],
        "criteria": el.get("eligibilityCriteria", ""),
        "elig_fields": [(k, v) for k, v in (
            ("Sexes eligible", ENUM.get(el.get("sex"), el.get("sex", ""))), ("Minimum age", el.get("minimumAge", "")),
            ("Maximum age", el.get("maximumAge", "")),
            ("Accepts healthy volunteers", {True: "Yes", False: "No"}.get(el.get("healthyVolunteers"), ""))) if v],
    }
    om = p.get("outcomesModule", {})
    for key, label in (("primaryOutcomes", "Primary"), ("secondaryOutcomes", "Secondary"), ("otherOutcomes", "Other")):
        for o in om.get(key, []):
            rec["outcomes"].append((label, o["measure"], o.get("description", ""), o.get("timeFrame", "")))
    return rec


def ctgov_to_md(rec):
    out = ["# " + rec["brief_title"]]
    meta = [("ClinicalTrials.gov ID", rec["nct_id"]), ("Official title", rec["official_title"]),
            ("Sponsor", rec["sponsor"]), ("Study type", rec["study_type"]), ("Phase", rec["phase"]),
            ("Enrollment", rec["enrollment"]), ("Conditions", "; ".join(rec["conditions"]))]
    out.append("\n".join(f"- {k}: {v}" for k, v in meta if v))
    if rec["brief_summary"]:
        out += ["## Brief Summary", rec["brief_summary"].strip()]
    if rec["detailed_description"]:
        out += ["## Detailed Description", rec["detailed_description"].strip()]
    if rec["design"]:
        out += ["## Study Design", "\n".join(f"- {k}: {v}" for k, v in rec["design"])]
    out.append("## Arms and Interventions")
    for label, typ, desc in rec["arms"]:
        out.append(f"### Arm: {label} ({typ})")
        if desc:
            out.append(desc.strip())
    for typ, name, desc, other in rec["interventions"]:
        out.append(f"### Intervention: {typ}: {name}")
        if desc:
            out.append(desc.strip())
        if other:
            out.append("Other names: " + "; ".join(other))
    if rec["outcomes"]:
        out.append("## Outcome Measures")
        for label in ("Primary", "Secondary", "Other"):
            items = [o for o in rec["outcomes"] if o[0] == label]
            if not items:
                continue
            out.append(f"### {label} Outcome Measures")
            lines = []
            for n, (_, measure, desc, tf) in enumerate(items, 1):
                pad = " " * len(f"{n}. ")
                parts = [f"{n}. {measure}"]
                if desc.strip():
                    for para in re.split(r"\n\s*\n", desc.strip()):
                        rows = []
                        for line in para.split("\n"):
                            line = line.strip()
                            if not line:
                                continue
                            # a hard wrap inside a sentence: join it back
                            if rows and re.match(r"[a-z0-9]", line) and not rows[-1].endswith((".", ":", ";")):
                                rows[-1] += " " + line
                            else:
                                rows.append(line)
                        parts.extend(pad + row for row in rows)
                if tf:
                    parts.append(pad + "Time frame: " + tf)
                lines.append("\n\n".join(parts))
            out.append("\n\n".join(lines))
    out.append("## Eligibility Criteria")
    if rec["criteria"].strip():
        out.append(rec["criteria"].strip())
    if rec["elig_fields"]:
        out.append("\n".join(f"- {k}: {v}" for k, v in rec["elig_fields"]))
    return "\n\n".join(out) + "\n"


# --------------------------------------------------------------------------
# PMC JATS XML (structured abstract) -> Markdown


def jats_text(e):
    return ws(html.unescape(re.sub(r"<[^>]+>", "", ET.tostring(e, encoding="unicode"))).replace("\u200a", " "))


def jats_inner(e):
    s = (e.text or "") + "".join(ET.tostring(c, encoding="unicode") for c in e)
    s = re.sub(r"<[^>]+>", "", s)
    return ws(html.unescape(s))


def abstract_to_md(path):
    raw = open(path, encoding="utf-8").read()
    raw = re.sub(r"<!DOCTYPE[^>]*>", "", raw)
    # keep character references as text for ElementTree
    raw = re.sub(r"&(?!(amp|lt|gt|quot|apos|#\d+|#x[0-9a-fA-F]+);)", "&amp;", raw)
    root = ET.fromstring(raw)
    title = jats_inner(root.find(".//article-meta/title-group/article-title"))
    out = ["# " + title]
    abs_ = [a for a in root.iter("abstract") if not a.get("abstract-type")][0]

    def walk(e, level):
        for c in e:
            if c.tag == "sec":
                t = c.find("title")
                if t is not None and jats_inner(t):
                    out.append("#" * level + " " + jats_inner(t).rstrip(":"))
                walk(c, level + 1)
            elif c.tag == "p":
                s = jats_inner(c)
                if s:
                    out.append(s)

    walk(abs_, 2)
    return "\n\n".join(out) + "\n"


# --------------------------------------------------------------------------

def main():
    src = sys.argv[1]
    S = lambda f: os.path.join(src, f)
    docs = {}
    docs["ctgov-NCT02438137-dimethyl-fumarate-osa.md"] = ctgov_to_md(ctgov_from_xml(S("NCT02438137.xml")))
    docs["ctgov-NCT00734539-fluconazole-prophylaxis.md"] = ctgov_to_md(ctgov_from_xml(S("NCT00734539.xml")))
    docs["ctgov-NCT02210780-dupilumab-vaccine-responses.md"] = ctgov_to_md(ctgov_from_json(S("NCT02210780.json")))
    docs["dailymed-lipitor-atorvastatin.md"] = spl_to_md(
        S("lipitor-orig.xml"), "LIPITOR® (atorvastatin calcium) Tablets for oral administration",
        keep=("34067-9", "34068-7", "43678-2", "34070-3", "43685-7", "34084-4"))
    docs["dailymed-humira-adalimumab.md"] = spl_to_md(
        S("humira.xml"), "HUMIRA (adalimumab) injection, for subcutaneous use",
        keep=("34066-1", "34067-9", "34068-7", "43678-2", "34070-3", "34089-3", "34090-1", "34092-7"),
        subsections={"34090-1": ["12.1"], "34092-7": ["14.4"]})
    docs["ctgov-NCT02970669-sacubitril-valsartan-activity.md"] = ctgov_to_md(ctgov_from_xml(S("NCT02970669.xml")))
    docs["ctgov-NCT02708238-infantile-colic.md"] = ctgov_to_md(ctgov_from_xml(S("NCT02708238.xml")))
    for pmc in ("PMC1891439", "PMC1863514", "PMC5976950"):
        docs[f"pmc-{pmc}-abstract.md"] = abstract_to_md(S(pmc + ".nxml"))
    fixtures = {
        "ctgov-NCT02699827.md": ctgov_to_md(ctgov_from_xml(S("NCT02699827.xml"))),
        "label-haloperidol-excerpt.md": spl_to_md(
            S("no-title.xml"), "Haloperidol Tablets, USP",
            keep=("34070-3", "34084-4", "34068-7"),
            subsections={"34084-4": ["Cardiovascular Effects"], "34068-7": ["Oral Administration", "Inital Dosage Range"]}),
        "pmc-PMC3669111-abstract.md": abstract_to_md(S("PMC3669111.nxml")),
    }
    os.makedirs(DOCS, exist_ok=True)
    os.makedirs(FIXTURES, exist_ok=True)
    only = sys.argv[2:]  # optional: file names to (re)write
    for folder, files in ((DOCS, docs), (FIXTURES, fixtures)):
        for name, text in files.items():
            if only and name not in only:
                continue
            with open(os.path.join(folder, name), "w", encoding="utf-8", newline="\n") as f:
                f.write(text)
            print(f"{os.path.relpath(os.path.join(folder, name), ROOT)}: {len(text)} chars")


if __name__ == "__main__":
    main()
