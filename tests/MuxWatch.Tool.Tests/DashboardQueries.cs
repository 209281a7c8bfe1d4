using System.Text.Json;
using System.Text.RegularExpressions;
using MuxWatch.Testing;

namespace MuxWatch.Tool.Tests;

/// <summary>
/// Runs every panel, annotation and template-variable query of a dashboard against a real Prometheus,
/// with the variables substituted as Grafana substitutes them on load ("All" selected).
/// </summary>
public sealed partial class DashboardQueries(PrometheusApi prometheus, DateTimeOffset start, DateTimeOffset end, TimeSpan step, string rateInterval)
{
    /// <summary>The dashboards of the repository.</summary>
    public static readonly string Folder = Path.Combine(BuiltProgram.RepositoryRoot, "dashboards");

    /// <summary>One query of a dashboard and whether it returned data.</summary>
    /// <param name="Source">Where it stands: the panel's title and target, or the annotation's name.</param>
    /// <param name="Expr">The query as run, variables substituted.</param>
    /// <param name="HasData">True when it returned at least one series.</param>
    public sealed record Outcome(string Source, string Expr, bool HasData);

    /// <summary>Every query of <paramref name="dashboard"/>, run. Throws when a variable finds no values or Prometheus refuses a query.</summary>
    public async Task<IReadOnlyList<Outcome>> RunAsync(JsonElement dashboard)
    {
        var variables = await ResolveVariablesAsync(dashboard).ConfigureAwait(false);
        var outcomes = new List<Outcome>();
        foreach (var panel in Panels(dashboard))
        {
            if (!panel.TryGetProperty("targets", out var targets))
            {
                continue;
            }

            foreach (var target in targets.EnumerateArray())
            {
                var expr = Substitute(target.GetProperty("expr").GetString()!, variables);
                var instant = target.TryGetProperty("instant", out var i) && i.GetBoolean();
                var result = instant ? await prometheus.QueryAsync(expr, end).ConfigureAwait(false) : await prometheus.QueryRangeAsync(expr, start, end, step).ConfigureAwait(false);
                outcomes.Add(new Outcome($"panel '{panel.GetProperty("title").GetString()}' {target.GetProperty("refId").GetString()}", expr, result.GetArrayLength() > 0));
            }
        }

        foreach (var annotation in dashboard.GetProperty("annotations").GetProperty("list").EnumerateArray())
        {
            if (annotation.TryGetProperty("expr", out var expr))
            {
                var substituted = Substitute(expr.GetString()!, variables);
                var result = await prometheus.QueryRangeAsync(substituted, start, end, step).ConfigureAwait(false);
                outcomes.Add(new Outcome($"annotation '{annotation.GetProperty("name").GetString()}'", substituted, result.GetArrayLength() > 0));
            }
        }

        return outcomes;
    }

    /// <summary>Every panel, nested rows' panels included.</summary>
    public static IEnumerable<JsonElement> Panels(JsonElement dashboard)
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

    /// <summary>
    /// Resolves query variables in order, as Grafana does on load with "All" selected: each label_values
    /// query runs with the variables before it substituted, and "All" becomes a regex of every value.
    /// </summary>
    private async Task<Dictionary<string, string>> ResolveVariablesAsync(JsonElement dashboard)
    {
        var values = new Dictionary<string, string>
        {
            ["__rate_interval"] = rateInterval,
            ["__range"] = $"{Math.Max(1, (int)(end - start).TotalSeconds)}s",
            ["__interval"] = $"{(int)step.TotalSeconds}s",
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
            if (!match.Success)
            {
                throw new InvalidOperationException($"variable {name}: '{query}' is not a label_values query");
            }

            var found = await prometheus.LabelValuesAsync(match.Groups["selector"].Value, match.Groups["label"].Value, start, end).ConfigureAwait(false);
            if (found.Count == 0)
            {
                throw new InvalidOperationException($"variable {name}: '{query}' found no values");
            }

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

    /// <summary>A use of a template variable, <c>$name</c> or <c>${name}</c>.</summary>
    [GeneratedRegex(@"\$\{?(?<name>\w+)\}?")]
    public static partial Regex VariableUse();

    [GeneratedRegex(@"[$^*{}\[\]'+?.()|]")]
    private static partial Regex RegexSpecial();

    [GeneratedRegex(@"^label_values\((?<selector>.+),\s*(?<label>\w+)\)$")]
    private static partial Regex LabelValues();
}
