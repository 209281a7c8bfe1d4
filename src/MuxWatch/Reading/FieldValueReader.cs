using System.Globalization;
using MuxWatch.Model;

namespace MuxWatch.Reading;

/// <summary>Reads one field's value as written: a tuple, a flag, a number with its unit, or text.</summary>
internal static class FieldValueReader
{
    /// <summary>Reads a value: a tuple when parenthesised with named parts, else a number or flag when it is one, else text.</summary>
    internal static FieldValue Parse(string raw)
    {
        raw = raw.Trim();
        if (raw.Length >= 2 && raw[0] == '(' && TryParseTuple(raw[^1] == ')' ? raw[1..^1] : raw[1..], out var parts))
        {
            return new FieldValue(raw, null, null, parts); // a tuple cut off before its ')' keeps the parts that are there
        }

        if (bool.TryParse(raw, out var flag))
        {
            return new FieldValue(raw, null, flag, null);
        }

        var number = ParseNumber(raw);
        var slash = number is null ? raw.IndexOf('/', StringComparison.Ordinal) : -1;
        return new FieldValue(raw, number, null, null, slash > 0 ? ParseNumber(raw[..slash]) : null);
    }

    /// <summary>A value that is a number of the given unit, such as the <c>5023ms elapsed</c> of an async header.</summary>
    internal static FieldValue FromNumber(string raw, double number) => new(raw.Trim(), number, null, null);

    /// <summary>
    /// A number, with a trailing unit (<c>KiB</c>, <c>ms</c>, <c>s</c>, <c>%</c>) and a decimal comma accepted,
    /// because <c>conn-sec</c> and <c>Local-CPU</c> are formatted in the app's culture.
    /// </summary>
    internal static double? ParseNumber(string text)
    {
        var span = text.AsSpan().Trim();
        foreach (var unit in NumberUnits)
        {
            if (span.EndsWith(unit, StringComparison.OrdinalIgnoreCase))
            {
                span = span[..^unit.Length].TrimEnd();
                break;
            }
        }

        if (span.IsEmpty || span.Length > 32)
        {
            return null;
        }

        // A single comma between digits is a decimal comma; anything else with a comma is not a number.
        var comma = span.IndexOf(',');
        if (comma >= 0)
        {
            if (span.LastIndexOf(',') != comma || span.Contains('.') || comma == 0 || comma == span.Length - 1)
            {
                return null;
            }

            Span<char> copy = stackalloc char[span.Length];
            span.CopyTo(copy);
            copy[comma] = '.';
            return double.TryParse(copy, NumberStyles.Float, CultureInfo.InvariantCulture, out var withComma) ? withComma : null;
        }

        if (double.TryParse(span, NumberStyles.Float, CultureInfo.InvariantCulture, out var number) && double.IsFinite(number))
        {
            return number;
        }

        // Pasted from a screenshot: OCR reads 0 as O and 1 as l. Only a token with digits in it is repaired.
        return PastedText.RepairNumber(span) is { } repaired && double.TryParse(repaired, NumberStyles.Float, CultureInfo.InvariantCulture, out var read) && double.IsFinite(read)
            ? read
            : null;
    }

    private static readonly string[] NumberUnits = ["KiB", "ms", "%", "s"];

    private static bool TryParseTuple(string inner, out IReadOnlyList<KeyValuePair<string, FieldValue>> parts)
    {
        var list = new List<KeyValuePair<string, FieldValue>>();
        parts = list;
        foreach (var item in inner.Split(',', StringSplitOptions.TrimEntries | StringSplitOptions.RemoveEmptyEntries))
        {
            var eq = item.IndexOf('=', StringComparison.Ordinal);
            if (eq <= 0 || !TimeoutMessageReader.IsFieldName(item.AsSpan(0, eq)))
            {
                return false;
            }

            var text = item[(eq + 1)..].Trim();
            var name = PastedText.PartName(item[..eq].Trim());
            if (!list.Exists(part => string.Equals(part.Key, name, StringComparison.Ordinal)))
            {
                list.Add(new(name, new FieldValue(text, ParseNumber(text), null, null))); // a name written twice keeps its first value, as fields do
            }
        }

        return list.Count > 0;
    }

}
