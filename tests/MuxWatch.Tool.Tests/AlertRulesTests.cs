using System.Diagnostics;
using System.Text.RegularExpressions;
using MuxWatch.Testing;

namespace MuxWatch.Tool.Tests;

/// <summary>The alert rules pass real <c>promtool</c>: syntax, and unit tests with firing and non-firing cases.</summary>
public sealed partial class AlertRulesTests
{
    private static readonly string Alerts = Path.Combine(BuiltProgram.RepositoryRoot, "alerts");

    [Fact]
    public async Task Promtool_checks_the_rule_files()
    {
        var (exitCode, output) = await PromtoolAsync("check", "rules", Path.Combine(Alerts, "muxwatch.rules.yml"));

        Assert.True(exitCode == 0, output);
        Assert.Contains("SUCCESS", output, StringComparison.Ordinal);
    }

    [Fact]
    public async Task Promtool_unit_tests_pass_for_every_alert()
    {
        var (exitCode, output) = await PromtoolAsync("test", "rules", Path.Combine(Alerts, "tests", "muxwatch.rules.test.yml"));

        Assert.True(exitCode == 0, output);
        Assert.Contains("SUCCESS", output, StringComparison.Ordinal);
    }

    [Fact]
    public async Task Every_alert_has_a_unit_test_a_summary_a_description_and_a_runbook_that_exists()
    {
        var rules = await File.ReadAllTextAsync(Path.Combine(Alerts, "muxwatch.rules.yml"));
        var tests = await File.ReadAllTextAsync(Path.Combine(Alerts, "tests", "muxwatch.rules.test.yml"));
        var alerts = AlertBlocks().Matches(rules).ToList();

        Assert.NotEmpty(alerts);
        Assert.Equal(Regex.Count(rules, "- alert: "), alerts.Count);
        foreach (Match alert in alerts)
        {
            var name = alert.Groups["name"].Value;
            var body = alert.Groups["body"].Value;
            Assert.Contains("summary:", body, StringComparison.Ordinal);
            Assert.Contains("description:", body, StringComparison.Ordinal);
            Assert.Matches(@"severity: (critical|warning|info)", body);
            Assert.Contains($"runbook_url: \"docs/runbooks/{name}.md\"", body, StringComparison.Ordinal);
            Assert.True(File.Exists(Path.Combine(BuiltProgram.RepositoryRoot, "docs", "runbooks", $"{name}.md")), $"no runbook for {name}");
            Assert.True(Regex.Count(tests, $@"alertname: {name}\b") >= 1, $"no promtool test for {name}");
        }
    }

    private static async Task<(int ExitCode, string Output)> PromtoolAsync(params string[] arguments)
    {
        var info = new ProcessStartInfo("promtool") { RedirectStandardOutput = true, RedirectStandardError = true, RedirectStandardInput = true };
        foreach (var argument in arguments)
        {
            info.ArgumentList.Add(argument);
        }

        var (exitCode, output, error) = await BuiltProgram.RunAsync(info);
        return (exitCode, output + error);
    }

    [GeneratedRegex(@"- alert: (?<name>\w+)\n(?<body>(?:(?!\n      - alert:).)*)", RegexOptions.Singleline)]
    private static partial Regex AlertBlocks();
}
