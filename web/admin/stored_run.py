"""A day the nightly chain stored, as its report and board pages show it.

The report is the one the nightly run made and stored in the warehouse (`assets.common.day_report`),
read back whole; the board lays out that report over the day's stored verdicts, counted by the
warehouse, of which only the rows it shows are read (`assets.common.day_board`). Neither reads the raw folder: the pages show what was stored, even when the folder has since
changed or gone. A day with no stored report is judged from the raw folder as before (`runs.Runs`).
"""

from __future__ import annotations

from dataclasses import dataclass

from evals.board import Board, BoardSpec
from evals.domains import get as get_domain
from web.admin.runs import run_title, valid_key

SOURCE = "야간 실행이 저장한 결과"
"""How the pages name a stored day's source."""


@dataclass
class StoredRun:
    """What the report and board pages read of a stored day: the stored report and when it was stored."""

    domain: str
    key: str
    day: str
    report: object
    stored_at: str
    warehouse: object
    sample: bool = False

    @property
    def spec(self) -> BoardSpec:
        return get_domain(self.domain).board()

    @property
    def title(self) -> str:
        return run_title(self.key)

    def source_note(self) -> str:
        return (f"{SOURCE}입니다 (저장 {self.stored_at} UTC). 원본 폴더를 다시 판정하지 않고 창고에서 읽었으며, "
                "원본 폴더가 그 뒤에 바뀌었어도 저장한 그대로입니다.")

    def items(self) -> int:
        """The day's stored verdict rows (counted by the warehouse)."""
        from assets.common.wiring import chain_for

        return self.warehouse.count_partition(chain_for(get_domain(self.domain)).table("verdicts"), self.day)

    def labelled(self) -> list[tuple[str, str, str]]:
        """(id, golden label, verdict) of every labelled item the day judged, as the report paired them."""
        return list(self.report.labelled)

    def other_keys(self, runs) -> list[str]:
        """The domain's other runs to link, without reading the raw folder: the whole folder, the stored
        days with the raw folder's days when already found, the uploads."""
        from assets.common.day_report import stored_days

        days = sorted(set(stored_days(self.warehouse, self.domain)) | set(runs.cached_days(self.domain)), reverse=True)
        return ["all", *[f"day-{d}" for d in days], *[f"up-{u}" for u in runs.uploads(self.domain)]]

    def board(self, report) -> Board:
        """The day's board over `report`, as the nightly run lays it out: the counts asked of the
        warehouse and only the rows shown read, whole (`StoredRows`); the quarantine whole from the
        stored table (the report keeps it without the raw text)."""
        from assets.common.day_board import StoredRows
        from assets.common.wiring import chain_for

        chain = chain_for(get_domain(self.domain))
        report.quarantine = self.warehouse.read_partition(chain.table("quarantine"), self.day) \
            if self.warehouse.has_table(chain.table("quarantine")) else report.quarantine
        return Board(self.domain, [], report, self.spec, sample=self.sample, stored=StoredRows(chain, self.warehouse, self.day))


def stored_run(warehouse_url: str, domain: str, key: str) -> StoredRun | None:
    """The stored day of run `key`, or None when `key` is not a day or no report of that day is stored."""
    if not valid_key(key) or not key.startswith("day-"):
        return None
    from assets.common.day_report import stored_report
    from assets.resources.warehouse import WarehouseResource

    warehouse = WarehouseResource(url=warehouse_url)
    found = stored_report(warehouse, domain, key[4:])
    if found is None:
        return None
    report, stored_at = found
    return StoredRun(domain, key, key[4:], report, stored_at, warehouse)
