"""Module doc."""
import os

CONST = 1


def top(a, b=2):
    def inner():
        pass
    return a


@dataclass
class Point(Base):
    x: int

    def __init__(self):
        self.x = 0

    @property
    def norm(self) -> float:
        return 0.0

    class Inner:
        def deep(self):
            pass


async def fetch():
    pass

if TYPE_CHECKING:
    def typed() -> None: ...
