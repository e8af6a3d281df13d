"""The declarative base every table of the store derives from.

Its own module so that each table module can import it while ``bot/store/schema.py``
imports every table module (Alembic and the model/migration comparison need them all
loaded), without an import cycle. The naming convention gives constraints and indexes
stable names on SQLite and PostgreSQL alike: Alembic needs them to alter tables later.
"""

from __future__ import annotations

import datetime as dt

import sqlalchemy as sa
from sqlalchemy.orm import DeclarativeBase

NAMING = {
    "ix": "ix_%(column_0_label)s",
    "uq": "uq_%(table_name)s_%(column_0_N_name)s",
    "ck": "ck_%(table_name)s_%(constraint_name)s",
    "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
}


class Base(DeclarativeBase):
    metadata = sa.MetaData(naming_convention=NAMING)


def utcnow() -> dt.datetime:
    return dt.datetime.now(dt.UTC)
