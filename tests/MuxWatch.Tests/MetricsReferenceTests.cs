using System.Text.RegularExpressions;
using MuxWatch.Testing;
using Prometheus;

namespace MuxWatch.Tests;

/// <summary>docs/metrics.md documents every family MuxWatch exports, and nothing it does not.</summary>
public sealed partial class MetricsReferenceTests
{
    [Fact]
    public async Task The_metric_reference_and_the_export_name_the_same_families()
    {
        var registry = Metrics.NewCustomRegistry();
        _ = new MuxWatch.StackExchangeRedis.MultiplexerMetrics(new MuxWatchMetrics(registry)); // the core's families and the multiplexer probe's
        using var stream = new MemoryStream();
        await registry.CollectAndExportAsTextAsync(stream);
        var exported = TypeLine().Matches(System.Text.Encoding.UTF8.GetString(stream.ToArray())).Select(m => m.Groups["name"].Value).ToHashSet();

        var reference = await File.ReadAllTextAsync(Path.Combine(BuiltProgram.RepositoryRoot, "docs", "metrics.md"));
        var documented = FamilyName().Matches(reference).Select(m => m.Groups["name"].Value)
            .Select(name => HistogramPart().Replace(name, string.Empty))
            .ToHashSet();

        Assert.True(exported.Count > 40, $"only {exported.Count} families exported");
        Assert.Empty(exported.Except(documented));
        Assert.Empty(documented.Except(exported));
    }

    [GeneratedRegex(@"^# TYPE (?<name>muxwatch_\w+) ", RegexOptions.Multiline)]
    private static partial Regex TypeLine();

    // A family named in the reference's text or tables: `muxwatch_...`, not a recording rule (muxwatch:...).
    [GeneratedRegex(@"`(?<name>muxwatch_[a-z0-9_]+)")]
    private static partial Regex FamilyName();

    [GeneratedRegex(@"_(bucket|sum|count)$")]
    private static partial Regex HistogramPart();
}
