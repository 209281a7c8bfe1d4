using System.Diagnostics;
using System.Globalization;
using System.Text;
using System.Text.Json;
using System.Text.RegularExpressions;
using MuxWatch.Testing;

namespace MuxWatch.Service.Tests;

/// <summary>
/// The dashboards: their structure against Grafana's own types, and every panel, annotation and
/// variable query run against a real Prometheus, with template variables substituted as Grafana does.
/// </summary>
/// <remarks>
/// The service does not export metrics yet (prometheus-net is not served, docs/status.md), so the
/// Prometheus here holds series of the metric contract (docs/metrics.md) written into its storage
/// with <c>promtool tsdb create-blocks-from openmetrics</c>, not scraped from the service. When the
/// export lands, the same query runner points at a Prometheus that scraped it.
/// </remarks>
public sealed partial class DashboardTests : IAsyncLifetime
{
    private static readonly string Dashboards = Path.Combine(BuiltProgram.RepositoryRoot, "dashboards");
    private static readonly TimeSpan Step = TimeSpan.FromSeconds(15);
    private readonly string _work = Directory.CreateTempSubdirectory("muxwatch-prometheus-").FullName;
    private readonly DateTimeOffset _end = DateTimeOffset.FromUnixTimeSeconds(DateTimeOffset.UtcNow.ToUnixTimeSeconds() / 60 * 60).AddMinutes(-10);
    private Process? _prometheus;
    private HttpClient _client = null!;

    private DateTimeOffset Start => _end.AddHours(-1);

    public async Task InitializeAsync()
    {
        var data = Path.Combine(_work, "contract.om");
        await File.WriteAllTextAsync(data, ContractSeries.OpenMetrics(Start, _end, Step));
        var storage = Path.Combine(_work, "tsdb");
        await RunAsync("promtool", "tsdb", "create-blocks-from", "openmetrics", data, storage);

        var config = Path.Combine(_work, "prometheus.yml");
        await File.WriteAllTextAsync(config, "global:\n  scrape_interval: 15s\nscrape_configs: []\n");
        var port = FreePort.Next();
        var info = new ProcessStartInfo("prometheus") { RedirectStandardOutput = true, RedirectStandardError = true };
        foreach (var argument in (string[])[$"--config.file={config}", $"--storage.tsdb.path={storage}", $"--web.listen-address=127.0.0.1:{port}", "--storage.tsdb.retention.time=30d"])
        {
            info.ArgumentList.Add(argument);
        }

        _prometheus = Process.Start(info)!;
        _prometheus.OutputDataReceived += (_, _) => { };
        _prometheus.ErrorDataReceived += (_, _) => { };
        _prometheus.BeginOutputReadLine();
        _prometheus.BeginErrorReadLine();
        _client = new HttpClient { BaseAddress = new Uri($"http://127.0.0.1:{port}"), Timeout = TimeSpan.FromSeconds(30) };
        await Eventually.UntilAsync(async () => (await _client.GetAsync(new Uri("/-/ready", UriKind.Relative))).IsSuccessStatusCode, "Prometheus to be ready");
        await Eventually.UntilAsync(async () => (await QueryRangeAsync("muxwatch_connected")).GetArrayLength() > 0, "Prometheus to load the contract series");
    }

    public async Task DisposeAsync()
    {
        _client.Dispose();
        if (_prometheus is { HasExited: false })
        {
            _prometheus.Kill(entireProcessTree: true);
            await _prometheus.WaitForExitAsync();
        }

        _prometheus?.Dispose();
        Directory.Delete(_work, recursive: true);
    }

    public static TheoryData<string> DashboardFiles() =>
        new(Directory.EnumerateFiles(Dashboards, "*.json").Select(Path.GetFileName).Order()!);

    [Fact]
    public async Task Every_dashboard_matches_the_grafana_schema_types()
    {
        var (exitCode, output, error) = await BuiltProgram.RunAsync(
            new ProcessStartInfo("node") { ArgumentList = { Path.Combine(Dashboards, "schema-check", "check.mjs") }, RedirectStandardOutput = true, RedirectStandardError = true, RedirectStandardInput = true });

        Assert.True(exitCode == 0, output + error);
        Assert.Contains("match @grafana/schema's Dashboard type", output, StringComparison.Ordinal);
    }

    [Theory]
    [MemberData(nameof(DashboardFiles))]
    public async Task Every_query_of_the_dashboard_parses_and_returns_data(string file)
    {
        using var document = JsonDocument.Parse(await File.ReadAllTextAsync(Path.Combine(Dashboards, file)));
        var root = document.RootElement;
        var variables = await ResolveVariablesAsync(root);
        var failures = new List<string>();
        var queries = 0;

        foreach (var panel in Panels(root))
        {
            Assert.True(panel.TryGetProperty("description", out var description) && description.GetString()!.Length > 10, $"{file}: panel '{panel.GetProperty("title")}' has no description");
            if (!panel.TryGetProperty("targets", out var targets))
            {
                continue;
            }

            Assert.True(panel.GetProperty("fieldConfig").GetProperty("defaults").TryGetProperty("unit", out _), $"{file}: panel '{panel.GetProperty("title")}' has no unit");
            foreach (var target in targets.EnumerateArray())
            {
                queries++;
                var expr = Substitute(target.GetProperty("expr").GetString()!, variables);
                var instant = target.TryGetProperty("instant", out var i) && i.GetBoolean();
                var result = instant ? await QueryAsync(expr) : await QueryRangeAsync(expr);
                if (result.GetArrayLength() == 0)
                {
                    failures.Add($"panel '{panel.GetProperty("title")}' {target.GetProperty("refId")}: no data for {expr}");
                }
            }
        }

        foreach (var annotation in root.GetProperty("annotations").GetProperty("list").EnumerateArray())
        {
            if (annotation.TryGetProperty("expr", out var expr))
            {
                queries++;
                var substituted = Substitute(expr.GetString()!, variables);
                if ((await QueryRangeAsync(substituted)).GetArrayLength() == 0)
                {
                    failures.Add($"annotation '{annotation.GetProperty("name")}': no data for {substituted}");
                }
            }
        }

        Assert.True(queries > 5, $"{file}: only {queries} queries found");
        Assert.True(failures.Count == 0, string.Join("\n", failures));
    }

    /// <summary>Every variable a dashboard uses is defined, and the variables of the contract are present.</summary>
    [Theory]
    [MemberData(nameof(DashboardFiles))]
    public async Task Every_variable_used_is_defined(string file)
    {
        var text = await File.ReadAllTextAsync(Path.Combine(Dashboards, file));
        using var document = JsonDocument.Parse(text);
        var defined = document.RootElement.GetProperty("templating").GetProperty("list").EnumerateArray()
            .Select(v => v.GetProperty("name").GetString()!).ToHashSet();

        Assert.Superset(new HashSet<string> { "datasource", "instance", "multiplexer", "endpoint" }, defined);
        foreach (Match used in VariableUse().Matches(text))
        {
            var name = used.Groups["name"].Value;
            Assert.True(defined.Contains(name) || name.StartsWith("__", StringComparison.Ordinal), $"{file} uses ${name}, which it does not define");
        }
    }

    /// <summary>
    /// Resolves query variables in order, as Grafana does on load with "All" selected: each label_values
    /// query runs with the variables before it substituted, and "All" becomes a regex of every value.
    /// </summary>
    private async Task<Dictionary<string, string>> ResolveVariablesAsync(JsonElement dashboard)
    {
        var values = new Dictionary<string, string>
        {
            ["__rate_interval"] = "1m",
            ["__range"] = "1h",
            ["__interval"] = "15s",
        };
        foreach (var variable in dashboard.GetProperty("templating").GetProperty("list").EnumerateArray())
        {
            if (variable.GetProperty("type").GetString() != "query")
            {
                continue;
            }

            var name = variable.GetProperty("name").GetString()!;
            var query = Substitute(variable.GetProperty("query").GetProperty("query").GetString()!, values);
            var match = LabelValues().Match(query);
            Assert.True(match.Success, $"variable {name}: '{query}' is not a label_values query");
            var found = await LabelValuesAsync(match.Groups["selector"].Value, match.Groups["label"].Value);
            Assert.True(found.Count > 0, $"variable {name}: '{query}' found no values");
            values[name] = "(" + string.Join('|', found.Select(GrafanaRegexEscape)) + ")";
        }

        return values;
    }

    /// <summary>
    /// How Grafana's Prometheus data source escapes a value inside a regex matcher: each regex special
    /// character gets a double backslash, which the PromQL string literal turns into one.
    /// </summary>
    private static string GrafanaRegexEscape(string value) => RegexSpecial().Replace(value.Replace("\\", "\\\\", StringComparison.Ordinal), @"\\$&");

    private static string Substitute(string text, Dictionary<string, string> values) =>
        VariableUse().Replace(text, m => values.TryGetValue(m.Groups["name"].Value, out var value) ? value : m.Value);

    private static IEnumerable<JsonElement> Panels(JsonElement dashboard)
    {
        foreach (var panel in dashboard.GetProperty("panels").EnumerateArray())
        {
            yield return panel;
            if (panel.TryGetProperty("panels", out var nested))
            {
                foreach (var inner in nested.EnumerateArray())
                {
                    yield return inner;
                }
            }
        }
    }

    private async Task<JsonElement> QueryRangeAsync(string expr)
    {
        var query = $"/api/v1/query_range?query={Uri.EscapeDataString(expr)}&start={Start.ToUnixTimeSeconds()}&end={_end.ToUnixTimeSeconds()}&step=15";
        return await GetResultAsync(query, expr);
    }

    private async Task<JsonElement> QueryAsync(string expr) =>
        await GetResultAsync($"/api/v1/query?query={Uri.EscapeDataString(expr)}&time={_end.ToUnixTimeSeconds()}", expr);

    private async Task<JsonElement> GetResultAsync(string pathAndQuery, string expr)
    {
        using var response = await _client.GetAsync(new Uri(pathAndQuery, UriKind.Relative));
        var body = await response.Content.ReadAsStringAsync();
        Assert.True(response.IsSuccessStatusCode, $"Prometheus refused '{expr}': {body}");
        using var document = JsonDocument.Parse(body);
        return document.RootElement.GetProperty("data").GetProperty("result").Clone();
    }

    private async Task<List<string>> LabelValuesAsync(string selector, string label)
    {
        var path = $"/api/v1/label/{label}/values?match[]={Uri.EscapeDataString(selector)}&start={Start.ToUnixTimeSeconds()}&end={_end.ToUnixTimeSeconds()}";
        using var response = await _client.GetAsync(new Uri(path, UriKind.Relative));
        var body = await response.Content.ReadAsStringAsync();
        Assert.True(response.IsSuccessStatusCode, $"Prometheus refused label_values({selector}, {label}): {body}");
        using var document = JsonDocument.Parse(body);
        return document.RootElement.GetProperty("data").EnumerateArray().Select(v => v.GetString()!).ToList();
    }

    private static async Task RunAsync(string program, params string[] arguments)
    {
        var info = new ProcessStartInfo(program) { RedirectStandardOutput = true, RedirectStandardError = true, RedirectStandardInput = true };
        foreach (var argument in arguments)
        {
            info.ArgumentList.Add(argument);
        }

        var (exitCode, output, error) = await BuiltProgram.RunAsync(info);
        Assert.True(exitCode == 0, $"{program} {string.Join(' ', arguments)}: {output}{error}");
    }

    [GeneratedRegex(@"\$\{?(?<name>\w+)\}?")]
    private static partial Regex VariableUse();

    [GeneratedRegex(@"[$^*{}\[\]'+?.()|]")]
    private static partial Regex RegexSpecial();

    [GeneratedRegex(@"^label_values\((?<selector>.+),\s*(?<label>\w+)\)$")]
    private static partial Regex LabelValues();
}
