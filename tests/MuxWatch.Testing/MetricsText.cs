using System.Globalization;
using System.Text.RegularExpressions;

namespace MuxWatch.Testing;

/// <summary>One scrape of a Prometheus text-format endpoint, read the way Prometheus reads it: families by TYPE line, samples by name and labels.</summary>
public sealed partial class MetricsText
{
    private readonly List<(string Name, Dictionary<string, string> Labels, double Value)> _samples = [];
    private readonly HashSet<string> _families = new(StringComparer.Ordinal);

    /// <summary>Reads <paramref name="text"/>.</summary>
    public MetricsText(string text)
    {
        ArgumentNullException.ThrowIfNull(text);
        Text = text;
        foreach (var line in text.Split('\n'))
        {
            if (line.StartsWith("# TYPE ", StringComparison.Ordinal))
            {
                _families.Add(line.Split(' ')[2]);
                continue;
            }

            var match = SampleLine().Match(line);
            if (!match.Success)
            {
                continue;
            }

            var labels = new Dictionary<string, string>(StringComparer.Ordinal);
            foreach (Match label in LabelPair().Matches(match.Groups["labels"].Value))
            {
                labels[label.Groups[1].Value] = label.Groups[2].Value;
            }

            _samples.Add((match.Groups["name"].Value, labels, double.Parse(match.Groups["value"].Value, CultureInfo.InvariantCulture)));
        }
    }

    /// <summary>The scraped text.</summary>
    public string Text { get; }

    /// <summary>Scrapes <paramref name="path"/> with <paramref name="client"/>.</summary>
    public static async Task<MetricsText> ScrapeAsync(HttpClient client, string path = "/metrics")
    {
        ArgumentNullException.ThrowIfNull(client);
        return new MetricsText(await client.GetStringAsync(new Uri(path, UriKind.Relative)).ConfigureAwait(false));
    }

    /// <summary>Every family the scrape declares (its <c># TYPE</c> lines).</summary>
    public IReadOnlyCollection<string> FamilyNames => _families;

    /// <summary>True when the scrape declares the family (a <c># TYPE</c> line).</summary>
    public bool HasFamily(string name) => _families.Contains(name);

    /// <summary>The samples named <paramref name="name"/> whose labels include every pair given.</summary>
    public IReadOnlyList<(IReadOnlyDictionary<string, string> Labels, double Value)> Samples(string name, params (string Label, string Value)[] labels) =>
        [.. _samples.Where(s => s.Name == name && labels.All(l => s.Labels.TryGetValue(l.Label, out var v) && v == l.Value))
            .Select(s => ((IReadOnlyDictionary<string, string>)s.Labels, s.Value))];

    /// <summary>The one sample's value, or null when there is none; the sum when several match.</summary>
    public double? Value(string name, params (string Label, string Value)[] labels)
    {
        var found = Samples(name, labels);
        return found.Count == 0 ? null : found.Sum(s => s.Value);
    }

    [GeneratedRegex(@"^(?<name>[a-zA-Z_:][a-zA-Z0-9_:]*)(\{(?<labels>.*)\})?\s+(?<value>[-+0-9.eEInfNa]+)(\s+\d+)?$")]
    private static partial Regex SampleLine();

    [GeneratedRegex(@"([a-zA-Z_][a-zA-Z0-9_]*)=""((?:[^""\\]|\\.)*)""")]
    private static partial Regex LabelPair();
}
