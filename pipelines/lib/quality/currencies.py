"""ISO 4217 codes of the currencies in use, for checking billing currency columns.

The alphabetic codes that are legal tender somewhere on 2026-01-01, taken from the Unicode CLDR
territory-currency data (CLDR 47, as shipped with Babel 2.19). Fund codes (BOV, CLF, USN, …),
precious metals and the test codes (XTS, XXX) are not money a bill is stated in, so they are left
out: a bill in one of them is a parse slip, not a currency.
"""

from __future__ import annotations

ISO_4217_CURRENCIES: frozenset[str] = frozenset(
    """
    AED AFN ALL AMD AOA ARS AUD AWG AZN BAM BBD BDT BGN BHD BIF BMD BND BOB BRL BSD BTN BWP BYN BZD CAD
    CDF CHF CLP CNY COP CRC CUP CVE CZK DJF DKK DOP DZD EGP ERN ETB EUR FJD FKP GBP GEL GHS GIP GMD GNF
    GTQ GYD HKD HNL HTG HUF IDR ILS INR IQD IRR ISK JMD JOD JPY KES KGS KHR KMF KPW KRW KWD KYD KZT LAK
    LBP LKR LRD LSL LYD MAD MDL MGA MKD MMK MNT MOP MRU MUR MVR MWK MXN MYR MZN NAD NGN NIO NOK NPR NZD
    OMR PAB PEN PGK PHP PKR PLN PYG QAR RON RSD RUB RWF SAR SBD SCR SDG SEK SGD SHP SLE SOS SRD SSP STN
    SYP SZL THB TJS TMT TND TOP TRY TTD TWD TZS UAH UGX USD UYU UZS VES VND VUV WST XAF XCD XCG XOF XPF
    YER ZAR ZMW ZWG
    """.split()  # noqa: SIM905 (a table of codes reads better than 154 quoted strings)
)
