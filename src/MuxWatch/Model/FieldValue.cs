namespace MuxWatch.Model;

/// <summary>
/// One value read from a timeout message: a number, a true/false flag, a tuple such as
/// <c>WORKER: (Busy=6,Free=994,Min=4,Max=1000)</c>, or text kept as written.
/// </summary>
/// <remarks>The raw text is always kept, so nothing the message said is lost by interpretation. Read by <c>FieldValueReader</c>.</remarks>
public sealed class FieldValue
{
    internal FieldValue(string raw, double? number, bool? flag, IReadOnlyList<KeyValuePair<string, FieldValue>>? parts, double? leadingNumber = null)
    {
        Raw = raw;
        Number = number;
        Flag = flag;
        Parts = parts;
        LeadingNumber = leadingNumber;
    }

    /// <summary>The number in front of a <c>/</c> (<c>mc: 1/1/0</c>), when the value is no number itself.</summary>
    internal double? LeadingNumber { get; }

    /// <summary>The value as it stood in the message, trimmed.</summary>
    public string Raw { get; }

    /// <summary>The value as a number, when it is one (units such as <c>KiB</c>, <c>ms</c> and <c>%</c> removed).</summary>
    public double? Number { get; }

    /// <summary>The value as a flag, when it is <c>True</c> or <c>False</c>.</summary>
    public bool? Flag { get; }

    /// <summary>The named parts of a parenthesised tuple, in the order written; null when the value is no tuple.</summary>
    public IReadOnlyList<KeyValuePair<string, FieldValue>>? Parts { get; }

    /// <summary>A named part of a tuple as a number, for example <c>Busy</c> of <c>WORKER</c>.</summary>
    public double? Part(string name)
    {
        if (Parts is null)
        {
            return null;
        }

        foreach (var (key, value) in Parts)
        {
            if (string.Equals(key, name, StringComparison.OrdinalIgnoreCase))
            {
                return value.Number;
            }
        }

        return null;
    }

    /// <inheritdoc />
    public override string ToString() => Raw;
}
