using System.Text.RegularExpressions;
using MuxWatch.Testing;
using Prometheus;

namespace MuxWatch.Tests;

/// <summary>docs/metrics.md documents every family MuxWatch exports, and nothing it does not.</summary>
public sealed partial class MetricsReferenceTests
{
    [Fact]
    public async Task The_metric_reference_and_the_declared_families_name_the_same_families_and_the_export_serves_them()
    {
        // The declarations (the core's and the multiplexer probe's): registration, removal and the meter follow from them.
        var registry = Metrics.NewCustomRegistry();
        var core = new MuxWatchMetrics(registry);
        var package = new MuxWatch.StackExchangeRedis.MultiplexerMetrics(core);
        var declared = core.Families.Select(family => family.Name).ToHashSet();
        Assert.Superset(package.Families.Select(family => family.Name).ToHashSet(), declared);

        var reference = await File.ReadAllTextAsync(Path.Combine(BuiltProgram.RepositoryRoot, "docs", "metrics.md"));
        var documented = FamilyName().Matches(reference).Select(m => m.Groups["name"].Value)
            .Select(name => HistogramPart().Replace(name, string.Empty))
            .ToHashSet();

        Assert.True(declared.Count > 40, $"only {declared.Count} families declared");
        Assert.Empty(declared.Except(documented));
        Assert.Empty(documented.Except(declared));

        // And what /metrics serves is what was declared, nothing else.
        using var stream = new MemoryStream();
        await registry.CollectAndExportAsTextAsync(stream);
        var exported = TypeLine().Matches(System.Text.Encoding.UTF8.GetString(stream.ToArray())).Select(m => m.Groups["name"].Value).ToHashSet();
        Assert.Equal(declared.Order(), exported.Order());
    }

    [GeneratedRegex(@"^# TYPE (?<name>muxwatch_\w+) ", RegexOptions.Multiline)]
    private static partial Regex TypeLine();

    // A family named in the reference's text or tables: `muxwatch_...`, not a recording rule (muxwatch:...).
    [GeneratedRegex(@"`(?<name>muxwatch_[a-z0-9_]+)")]
    private static partial Regex FamilyName();

    [GeneratedRegex(@"_(bucket|sum|count)$")]
    private static partial Regex HistogramPart();
}
