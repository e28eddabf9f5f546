"""AJCC 8th edition staging: the edition's stage-group definitions, one example per type and group boundary.

Each row is a T/N/M combination the edition's table places in a group, chosen on both sides of a boundary
(the last T/N of one group and the first of the next), so a table shifted by one row fails.
"""

import pytest

from clinical_cf.catalog.css.staging import (
    StagingError,
    grade_group,
    m_category,
    n_agrees_with_count,
    n_category,
    parse_tnm,
    stage_group,
    with_m,
)

GROUPS = [
    # breast, anatomic stage groups
    ("breast", "pT1cN0M0", "IA"), ("breast", "pT1cN1aM0", "IIA"), ("breast", "pT2N0M0", "IIA"), ("breast", "cT2N1M0", "IIB"),
    ("breast", "pT3N0M0", "IIB"), ("breast", "pT3N1aM0", "IIIA"), ("breast", "pT2N2aM0", "IIIA"), ("breast", "cT4bN1M0", "IIIB"),
    ("breast", "pT1cN3aM0", "IIIC"), ("breast", "cT2N1M1", "IV"), ("breast", "pT1bN1miM0", "IB"),
    # NSCLC
    ("nsclc", "pT1aN0M0", "IA1"), ("nsclc", "pT1cN0M0", "IA3"), ("nsclc", "pT2aN0M0", "IB"), ("nsclc", "pT2bN0M0", "IIA"),
    ("nsclc", "pT2bN1M0", "IIB"), ("nsclc", "cT3N0M0", "IIB"), ("nsclc", "pT3N1M0", "IIIA"), ("nsclc", "pT2aN2M0", "IIIA"),
    ("nsclc", "cT3N2M0", "IIIB"), ("nsclc", "cT1cN3M0", "IIIB"), ("nsclc", "cT4N3M0", "IIIC"), ("nsclc", "cT2bN2M1b", "IVA"),
    ("nsclc", "cT2bN2M1a", "IVA"), ("nsclc", "cT2bN2M1c", "IVB"),
    # colorectal
    ("colorectal", "pT2N0M0", "I"), ("colorectal", "pT3N0M0", "IIA"), ("colorectal", "pT4aN0M0", "IIB"), ("colorectal", "pT4bN0M0", "IIC"),
    ("colorectal", "pT2N1aM0", "IIIA"), ("colorectal", "pT3N1aM0", "IIIB"), ("colorectal", "pT1N2aM0", "IIIA"),
    ("colorectal", "pT3N2aM0", "IIIB"), ("colorectal", "pT4aN2aM0", "IIIC"), ("colorectal", "pT3N2bM0", "IIIC"),
    ("colorectal", "pT4bN1bM0", "IIIC"), ("colorectal", "cT3N1M1a", "IVA"), ("colorectal", "cT3N1M1b", "IVB"), ("colorectal", "cT3N1M1c", "IVC"),
    # pancreatic
    ("pancreatic", "pT1N0M0", "IA"), ("pancreatic", "pT2N0M0", "IB"), ("pancreatic", "pT3N0M0", "IIA"), ("pancreatic", "pT2N1M0", "IIB"),
    ("pancreatic", "pT1N2M0", "III"), ("pancreatic", "cT4N0M0", "III"), ("pancreatic", "cT3N1M1", "IV"),
    # gastric: pathological groups (pT3N1 IIB, pT3N2 IIIA: the review's two findings) and clinical ones
    ("gastric", "pT1N0M0", "IA"), ("gastric", "pT2N0M0", "IB"), ("gastric", "pT3N0M0", "IIA"), ("gastric", "pT3N1M0", "IIB"),
    ("gastric", "pT3N2M0", "IIIA"), ("gastric", "pT3N3aM0", "IIIB"), ("gastric", "pT3N3bM0", "IIIC"), ("gastric", "pT4aN0M0", "IIB"),
    ("gastric", "pT4bN0M0", "IIIA"), ("gastric", "pT1N3bM0", "IIIB"), ("gastric", "cT2N0M0", "I"), ("gastric", "cT2N1M0", "IIA"),
    ("gastric", "cT3N0M0", "IIB"), ("gastric", "cT3N1M0", "III"), ("gastric", "cT4bN0M0", "IVA"), ("gastric", "cT3N2M1", "IVB"),
    # melanoma: pathological N0 and stage III; clinical stage III has no subgroups
    ("melanoma", "pT1bN0M0", "IA"), ("melanoma", "cT1bN0M0", "IB"), ("melanoma", "pT2aN0M0", "IB"), ("melanoma", "pT2bN0M0", "IIA"),
    ("melanoma", "pT3bN0M0", "IIB"), ("melanoma", "pT4bN0M0", "IIC"), ("melanoma", "pT2aN1aM0", "IIIA"), ("melanoma", "pT2aN1bM0", "IIIB"),
    ("melanoma", "pT2bN1aM0", "IIIB"), ("melanoma", "pT3aN2aM0", "IIIB"), ("melanoma", "pT3bN1aM0", "IIIC"), ("melanoma", "pT4bN2cM0", "IIIC"),
    ("melanoma", "pT4bN3aM0", "IIID"), ("melanoma", "pT1aN2cM0", "IIIC"), ("melanoma", "pT3b cN1b M0", "III"), ("melanoma", "pT2a cN1b M1d", "IV"),
    # ovarian (FIGO 2014 / AJCC 8)
    ("ovarian", "pT1aN0M0", "IA"), ("ovarian", "pT1cN0M0", "IC"), ("ovarian", "pT2bN0M0", "IIB"), ("ovarian", "pT2aN1M0", "IIIA1"),
    ("ovarian", "pT3aN0M0", "IIIA2"), ("ovarian", "pT3bN1M0", "IIIB"), ("ovarian", "cT3cN1M0", "IIIC"), ("ovarian", "cT3cN1M1a", "IVA"),
    ("ovarian", "cT3cN1M1b", "IVB"),
]


@pytest.mark.parametrize(("cancer_type", "tnm", "group"), GROUPS)
def test_stage_group_is_the_editions(cancer_type, tnm, group):
    assert stage_group(cancer_type, tnm) == group


@pytest.mark.parametrize(
    ("tnm", "grade", "psa", "group"),
    [
        ("cT1cN0M0", 1, 6.0, "I"),
        ("cT1cN0M0", 1, 12.0, "IIA"),
        ("cT2bN0M0", 1, 6.0, "IIA"),
        ("cT2aN0M0", 2, 6.0, "IIB"),
        ("cT2cN0M0", 3, 13.0, "IIC"),
        ("cT2cN0M0", 4, 19.9, "IIC"),
        ("cT2cN0M0", 4, 20.0, "IIIA"),  # PSA >= 20 with T1-2 and Grade Group 1-4
        ("pT3aN0M0", 3, 5.0, "IIIB"),
        ("cT2cN0M0", 5, 8.0, "IIIC"),  # the review's prostate-013/017: Grade Group 5 is IIIC whatever T
        ("pT3bN0M0", 5, 8.0, "IIIC"),
        ("cT3aN1M0", 3, 30.0, "IVA"),
        ("cT3aN1M1b", 3, 30.0, "IVB"),
    ],
)
def test_prostate_stage_uses_grade_group_and_psa(tnm, grade, psa, group):
    assert stage_group("prostate", tnm, grade_group=grade, psa=psa) == group


@pytest.mark.parametrize(
    ("cancer_type", "positive", "method", "n"),
    [
        ("gastric", 1, "pathologic", "N1"), ("gastric", 2, "pathologic", "N1"), ("gastric", 3, "pathologic", "N2"),
        ("gastric", 6, "pathologic", "N2"), ("gastric", 7, "pathologic", "N3a"), ("gastric", 16, "pathologic", "N3b"),
        ("colorectal", 1, "pathologic", "N1a"), ("colorectal", 3, "pathologic", "N1b"), ("colorectal", 4, "pathologic", "N2a"),
        ("colorectal", 7, "pathologic", "N2b"), ("pancreatic", 3, "pathologic", "N1"), ("pancreatic", 4, "pathologic", "N2"),
        ("breast", 3, "sentinel", "N1a"), ("breast", 4, "pathologic", "N2a"), ("breast", 10, "pathologic", "N3a"),
        ("breast", 2, "clinical", "N1"), ("melanoma", 1, "sentinel", "N1a"), ("melanoma", 3, "sentinel", "N2a"),
        ("melanoma", 4, "sentinel", "N3a"), ("melanoma", 1, "clinical", "N1b"), ("prostate", 2, "pathologic", "N1"),
        ("nsclc", 0, "pathologic", "N0"),
    ],
)
def test_n_category_follows_the_positive_node_count(cancer_type, positive, method, n):
    assert n_category(cancer_type, positive, method) == n


def test_nsclc_n_is_by_station_not_count():
    assert n_category("nsclc", 2, station="hilar") == "N1"
    assert n_category("nsclc", 1, station="mediastinal") == "N2"
    with pytest.raises(StagingError, match="station"):
        n_category("nsclc", 2)


@pytest.mark.parametrize(
    ("cancer_type", "n", "positive", "agrees"),
    [
        ("gastric", "N2", 1, False),  # the review's gastric-002 'pT3N2 (1/28 LN)'
        ("gastric", "N1", 4, False),  # gastric-004 'ypT3N1 (4/18 LN)'
        ("nsclc", "N0", 1, False),  # nsclc-008 'pT2bN0 (1/16 LN)'
        ("nsclc", "N2", 1, True),
        ("colorectal", "N1a", 1, True),
        ("breast", "N1a", 2, True),
    ],
)
def test_a_count_against_its_n_is_checked(cancer_type, n, positive, agrees):
    assert n_agrees_with_count(cancer_type, n, positive) is agrees


@pytest.mark.parametrize(
    ("cancer_type", "sites", "m"),
    [
        ("melanoma", ["brain", "lung"], "M1d"),  # the review's melanoma-021/023/027/029
        ("melanoma", ["lung"], "M1b"),  # melanoma-028
        ("melanoma", ["lung", "liver"], "M1c"),
        ("melanoma", ["subcutaneous tissue"], "M1a"),
        ("nsclc", ["contralateral lung"], "M1a"),
        ("nsclc", ["bone"], "M1b"),
        ("nsclc", ["contralateral lung", "adrenal gland"], "M1b"),
        ("nsclc", ["brain", "bone"], "M1c"),
        ("nsclc", ["liver (multiple lesions)", "lung"], "M1c"),
        ("nsclc", ["liver", "lung"], "M1b"),
        ("colorectal", ["liver"], "M1a"),
        ("colorectal", ["liver", "lung"], "M1b"),
        ("colorectal", ["liver", "peritoneum"], "M1c"),
        ("ovarian", ["pleura"], "M1a"),
        ("ovarian", ["pleura", "liver parenchyma"], "M1b"),
        ("prostate", ["retroperitoneal lymph nodes"], "M1a"),
        ("prostate", ["bone", "retroperitoneal lymph nodes"], "M1b"),
        ("prostate", ["bone", "liver"], "M1c"),
        ("gastric", ["liver"], "M1"),
        ("breast", [], "M0"),
    ],
)
def test_m_subcategory_comes_from_the_sites(cancer_type, sites, m):
    assert m_category(cancer_type, sites) == m


def test_a_post_neoadjuvant_stage_is_never_the_stage_at_diagnosis():
    with pytest.raises(StagingError, match="post-neoadjuvant"):
        stage_group("breast", "ypT1c ypN1a")


def test_unknown_categories_are_refused_not_guessed():
    with pytest.raises(StagingError):
        stage_group("breast", "pTxN1aM0")
    with pytest.raises(StagingError, match="Grade Group"):
        stage_group("prostate", "cT2cN0M0", psa=5.0)
    with pytest.raises(StagingError, match="subcategory"):
        stage_group("nsclc", "cT2bN2M1")


def test_tnm_text_is_read_as_charts_write_it():
    t = parse_tnm("pT3b cN1b M0")
    assert (t.t_prefix, t.t, t.n_prefix, t.n, t.m) == ("p", "T3b", "c", "N1b", "M0")
    assert parse_tnm("ypT1c ypN1a").post_neoadjuvant
    assert with_m("pT3N1aM0", "M1a") == "pT3N1aM1a"
    assert with_m("pT2a cN1b M0", "M1d") == "pT2a cN1b M1d"


@pytest.mark.parametrize(("histology", "gg"), [("Gleason 4+5=9 (Grade Group 5)", 5), ("Gleason 3+4=7", 2), ("Gleason 4+3=7", 3), ("Gleason 4+4=8", 4)])
def test_grade_group_from_the_histology(histology, gg):
    assert grade_group(histology) == gg


# --- issue 42 (review 3): the edition's boundary definitions, one test per definition -------------------------------

from clinical_cf.catalog.css.staging import current_stage, staging_table  # noqa: E402


@pytest.mark.parametrize("tnm, group", [
    # AJCC 8 oesophagus and EGJ, adenocarcinoma, pathological (pTNM) groups.
    ("pT3N1M0", "IIIB"), ("pT3N2M0", "IIIB"), ("pT2N1M0", "IIIA"), ("pT1bN2M0", "IIIA"), ("pT3N0M0", "IIB"),
    ("pT1bN1M0", "IIB"), ("pT4aN1M0", "IIIB"), ("pT4aN2M0", "IVA"), ("pT3N3M0", "IVA"), ("pT4bN0M0", "IVA"),
    # clinical (cTNM) groups
    ("cT3N1M0", "III"), ("cT2N0M0", "IIB"), ("cT1N1M0", "IIA"), ("cT3N2M0", "IVA"), ("cT3N1M1", "IVB"),
])
def test_a_junction_tumour_within_2_cm_is_staged_with_the_oesophageal_tables(tnm, group):
    """AJCC 8: a tumour involving the EGJ with its epicentre no more than 2 cm into the stomach is an oesophageal cancer."""
    assert stage_group("gastric", tnm, site="gastroesophageal junction") == group


@pytest.mark.parametrize("site, table", [
    ("gastroesophageal junction", "oesophageal"), ("GEJ, Siewert II", "oesophageal"),
    ("gastroesophageal junction (epicentre 1.5 cm below the junction)", "oesophageal"),
    ("cardia involving the GEJ, epicentre 3 cm into the stomach", "gastric"), ("GEJ, Siewert III", "gastric"),
    ("gastric body", "gastric"), ("gastric antrum", "gastric"),
])
def test_the_2_cm_rule_picks_the_table(site, table):
    assert staging_table("gastric", site) == table


def test_a_stomach_tumour_keeps_the_stomach_table():
    assert stage_group("gastric", "pT3N1M0", site="gastric body") == "IIB"
    assert stage_group("gastric", "pT3N1M0") == "IIB"


def test_oesophageal_n_counts_nodes_as_the_edition_does():
    """Oesophagus: N1 1-2, N2 3-6, N3 7 or more (no N3a/N3b)."""
    assert [n_category("oesophageal", k) for k in (0, 2, 3, 6, 7, 16)] == ["N0", "N1", "N2", "N2", "N3", "N3"]


@pytest.mark.parametrize("sites, m", [
    (["peritoneum"], "M0"), (["omentum"], "M0"), (["liver surface"], "M0"), (["splenic capsule"], "M0"),
    (["pleura"], "M1a"), (["liver parenchyma"], "M1b"), (["peritoneum", "pleura"], "M1a"), (["peritoneum", "lung"], "M1b"),
    (["inguinal lymph nodes"], "M1b"),
])
def test_ovarian_peritoneal_and_capsular_disease_is_t3_not_m1(sites, m):
    """FIGO 2014 / AJCC 8: peritoneal spread beyond the pelvis and liver or spleen capsule is T3 (stage III); pleural effusion
    M1a; parenchymal and extra-abdominal metastases (inguinal nodes included) M1b."""
    assert m_category("ovarian", sites) == m


@pytest.mark.parametrize("tnm", ["cTisN0M0", "pTisN0M0"])
def test_gastric_tis_is_stage_0(tnm):
    assert stage_group("gastric", tnm) == "0"


def test_breast_t1mi_is_stage_ia():
    assert stage_group("breast", "pT1miN0M0") == "IA"
    assert stage_group("breast", "pT1miN1miM0") == "IB"


@pytest.mark.parametrize("tnm, group", [("pTisN0M0", "0"), ("cTisN0M0", "0"), ("pT1miN0M0", "IA1")])
def test_nsclc_tis_and_t1mi(tnm, group):
    assert stage_group("nsclc", tnm) == group


def test_the_record_s_primary_site_chooses_the_table():
    class Record:  # the fields current_stage reads
        primary_site = "gastroesophageal junction"
        tnm = "pT3N1M0"
        metastatic_sites: list[str] = []
        histology = "Adenocarcinoma, intestinal type"
        labs: list = []
        treatment_lines: list = []
        resection = None
        metastasis_date = None

    assert current_stage("gastric", Record()) == "IIIB"
