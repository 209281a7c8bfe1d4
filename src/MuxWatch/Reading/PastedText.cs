using System.Text.RegularExpressions;

namespace MuxWatch.Reading;

/// <summary>
/// Reads text as people paste it, not as the client wrote it: copied from screenshots (OCR reads
/// <c>=</c> as <c>-</c>, <c>I</c> as <c>l</c>, <c>0</c> as <c>O</c>), cut off mid-field. Each repair
/// changes only what cannot be read otherwise, and only towards a name or number the client writes.
/// </summary>
/// <remarks>
/// Hand-written: no library knows the client's vocabulary. A name is repaired only when its OCR
/// skeleton (<c>0</c>/<c>o</c>, <c>1</c>/<c>l</c>/<c>i</c>/<c>|</c> folded together) matches exactly
/// one known field, so a field the glossary does not know stays as written.
/// </remarks>
internal static partial class PastedText
{
    /// <summary>The parts of the IOCP, WORKER and POOL tuples.</summary>
    private static readonly string[] TupleParts = ["Busy", "Free", "Min", "Max", "Threads", "QueuedItems", "CompletedItems", "Timers"];

    private static readonly HashSet<string> KnownFields = new(
        FieldGlossary.Names.Concat(["IOCP", "WORKER", "POOL", "Local-CPU", "queue", "qc", "wr", "wq", "ar", "err", "mgr", "inst", "next", "command", "clientName", "serverEndpoint", "keyHashSlot", "outbound", "inbound"]),
        StringComparer.Ordinal);

    private static readonly HashSet<string> KnownParts = new(TupleParts, StringComparer.Ordinal);

    private static readonly Dictionary<string, string?> KnownBySkeleton = BuildSkeletons(KnownFields);

    private static readonly Dictionary<string, string?> PartsBySkeleton = BuildSkeletons(KnownParts);

    /// <summary>
    /// The message inside a JSON document, as log shippers and structured logs paste it
    /// (<c>{"message":"Timeout performing ...","level":"error"}</c>, or a JSON string alone): the longest string
    /// value that holds a client header, unescaped, so that the last field's value does not keep the closing
    /// <c>"}</c>. Text that is not such a document comes back as it is.
    /// </summary>
    public static string OutOfJson(string text)
    {
        var trimmed = text.AsSpan().Trim();
        if (trimmed.Length < 2 || !(trimmed[0] is '{' or '"' or '[') || !(trimmed[^1] is '}' or '"' or ']'))
        {
            return text;
        }

        try
        {
            using var document = System.Text.Json.JsonDocument.Parse(trimmed.ToString(), new System.Text.Json.JsonDocumentOptions { MaxDepth = 16 });
            string? best = null;
            Visit(document.RootElement, ref best, depth: 0);
            return best ?? text;
        }
        catch (System.Text.Json.JsonException)
        {
            return text; // not JSON after all: read as pasted
        }

        static void Visit(System.Text.Json.JsonElement element, ref string? best, int depth)
        {
            switch (element.ValueKind)
            {
                case System.Text.Json.JsonValueKind.String:
                    var value = element.GetString()!;
                    if ((best is null || value.Length > best.Length) && LooksLikeAMessage(value))
                    {
                        best = value;
                    }

                    break;
                case System.Text.Json.JsonValueKind.Object when depth < 8:
                    foreach (var property in element.EnumerateObject())
                    {
                        Visit(property.Value, ref best, depth + 1);
                    }

                    break;
                case System.Text.Json.JsonValueKind.Array when depth < 8:
                    foreach (var item in element.EnumerateArray())
                    {
                        Visit(item, ref best, depth + 1);
                    }

                    break;
            }
        }

        static bool LooksLikeAMessage(string value) =>
            value.Contains("Timeout", StringComparison.OrdinalIgnoreCase) || value.Contains("connect", StringComparison.OrdinalIgnoreCase)
            || value.Contains("qs:", StringComparison.Ordinal) || value.Contains("serverEndpoint", StringComparison.Ordinal);
    }

    /// <summary>The field name the client writes that <paramref name="name"/> was read as, or <paramref name="name"/> itself.</summary>
    public static string FieldName(string name) => KnownFields.Contains(name) ? name : Repair(name, KnownBySkeleton);

    /// <summary>The tuple part name (<c>Busy</c>, <c>Min</c>, ...) that <paramref name="name"/> was read as, or itself.</summary>
    public static string PartName(string name) => KnownParts.Contains(name) ? name : Repair(name, PartsBySkeleton);

    /// <summary>
    /// <c>(Busy-40,Free-32727,Min-8)</c> (OCR's reading of <c>=</c>) back to <c>(Busy=40,...)</c>:
    /// only a name right after <c>(</c> or <c>,</c> followed by a dash and a number changes.
    /// </summary>
    public static string RepairTupleDashes(string text) => HasDashedTuple(text) ? TupleDash().Replace(text, "$1=") : text;

    /// <summary>
    /// Drops OCR debris between a tuple's name and its <c>(</c>: <c>WORKER:l (Busy-3217,...)</c> (a screenshot's
    /// colon and space read as <c>:l</c>) back to <c>WORKER: (Busy-3217,...)</c>. Only one or two characters
    /// right after a <c>name:</c> and right before a <c>(</c> that opens <c>Name=</c> or <c>Name-</c> parts change.
    /// </summary>
    public static string RepairTupleNameDebris(string text) => HasTupleNameDebris(text) ? TupleNameDebris().Replace(text, "$1: (") : text;

    /// <summary>A cheap look before the regex: a <c>(</c> preceded within four characters by a colon and something other than a space.</summary>
    private static bool HasTupleNameDebris(string text)
    {
        for (var open = text.IndexOf('('); open >= 0; open = text.IndexOf('(', open + 1))
        {
            var colon = text.LastIndexOf(':', open, Math.Min(open + 1, 5));
            if (colon >= 0 && text.AsSpan(colon + 1, open - colon - 1).Trim().Length > 0)
            {
                return true;
            }
        }

        return false;
    }

    /// <summary>A cheap look before the regex: a <c>(</c> whose first separator is a dash before a digit, not <c>=</c>.</summary>
    private static bool HasDashedTuple(string text)
    {
        for (var open = text.IndexOf('('); open >= 0; open = text.IndexOf('(', open + 1))
        {
            for (var i = open + 1; i < Math.Min(text.Length - 1, open + 24); i++)
            {
                var c = text[i];
                if (c == '-' && (char.IsAsciiDigit(text[i + 1]) || text[i + 1] is 'O' or 'o' or 'l' or 'I' or ' '))
                {
                    return true;
                }

                if (!char.IsAsciiLetterOrDigit(c) && c != ' ')
                {
                    break; // '=' (a tuple as the client writes it), or not a tuple at all
                }
            }
        }

        return false;
    }

    /// <summary>A number OCR misread (<c>1O</c>, <c>l5</c>, <c>O</c>): letters that look like digits, beside a digit or alone in a short token.</summary>
    public static string? RepairNumber(ReadOnlySpan<char> text)
    {
        // A digit beside the look-alikes, or a short token of look-alikes alone ("qs: O").
        if (text.IsEmpty || text.Length > 32 || (!text.ContainsAnyInRange('0', '9') && (text.Length > 3 || text.ContainsAnyExcept("OolI|"))))
        {
            return null;
        }

        Span<char> repaired = stackalloc char[text.Length];
        var changed = false;
        for (var i = 0; i < text.Length; i++)
        {
            var c = text[i];
            repaired[i] = c switch
            {
                'O' or 'o' => '0',
                'I' or 'l' or '|' => '1',
                _ when char.IsAsciiDigit(c) || c is '.' or ',' or '-' => c,
                _ => '\0',
            };
            if (repaired[i] == '\0')
            {
                return null;
            }

            changed |= repaired[i] != c;
        }

        return changed ? new string(repaired) : null;
    }

    private static string Repair(string name, Dictionary<string, string?> known)
    {
        if (!known.TryGetValue(Skeleton(name), out var match) || match is null)
        {
            return name;
        }

        return match;
    }

    private static Dictionary<string, string?> BuildSkeletons(IEnumerable<string> names)
    {
        var map = new Dictionary<string, string?>(StringComparer.Ordinal);
        foreach (var name in names.Distinct(StringComparer.Ordinal))
        {
            var skeleton = Skeleton(name);
            map[skeleton] = map.TryGetValue(skeleton, out var existing) && existing != name ? null : name; // ambiguous: never repaired to
        }

        return map;
    }

    private static string Skeleton(string name) => string.Create(name.Length, name, static (span, source) =>
    {
        for (var i = 0; i < source.Length; i++)
        {
            var c = char.ToLowerInvariant(source[i]);
            span[i] = c switch
            {
                '0' => 'o',
                '1' or 'i' or '|' => 'l',
                _ => c,
            };
        }
    });

    [GeneratedRegex(@"\b([A-Za-z0-9|]{3,8})\s?:\s?[^\s(,:]{1,2}\s?\((?=[A-Za-z]{3,16}\s?[=-])")]
    private static partial Regex TupleNameDebris();

    [GeneratedRegex(@"(?<=[(,]\s?)([A-Za-z]{2,16})\s?-\s?(?=[0-9OolI]+\s?[,)])")]
    private static partial Regex TupleDash();
}
