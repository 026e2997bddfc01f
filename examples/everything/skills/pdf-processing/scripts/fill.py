"""Fill a PDF form: fill.py FORM.pdf VALUES.json OUT.pdf"""
import json
import sys


def main(form, values, out):
    fields = json.load(open(values))
    print(f"would fill {len(fields)} fields of {form} into {out}")


if __name__ == "__main__":
    main(*sys.argv[1:4])
