using MuxWatch.Testing;

namespace MuxWatch.Tests;

/// <summary>
/// Every benchmark runs once at the smallest size (BenchmarkDotNet's dry job, in-process), so the
/// benchmarks keep working. No timing is asserted: figures belong in docs/benchmarks.md.
/// </summary>
[TakesMinutes]
public sealed class BenchmarkSmokeTests
{
    [Fact]
    public async Task Every_benchmark_runs_once()
    {
        var artifacts = Directory.CreateTempSubdirectory("muxwatch-bench-").FullName;
        try
        {
            var info = BuiltProgram.StartInfo("MuxWatch.Benchmarks", "--filter", "*", "--job", "dry", "--inProcess", "--artifacts", artifacts);

            var (exitCode, output, error) = await BuiltProgram.RunAsync(info, timeout: TimeSpan.FromMinutes(5));

            Assert.True(exitCode == 0, $"exit {exitCode}: {error}\n{output}");
            Assert.Contains("ReadAndDiagnose", output, StringComparison.Ordinal);
            Assert.Contains("ThrowOtherException", output, StringComparison.Ordinal);
            Assert.Contains("ThrowRedisTimeout", output, StringComparison.Ordinal);
            Assert.Contains("CorrelateOneTimeout", output, StringComparison.Ordinal);
            Assert.DoesNotContain("// ERROR", output, StringComparison.Ordinal);
        }
        finally
        {
            Directory.Delete(artifacts, recursive: true);
        }
    }

    [Fact]
    public async Task The_confidence_run_prints_each_words_share_on_both_parts_of_the_corpus()
    {
        var info = BuiltProgram.StartInfo("MuxWatch.Benchmarks", "confidence");

        var (exitCode, output, error) = await BuiltProgram.RunAsync(info);

        Assert.True(exitCode == 0, $"exit {exitCode}: {error}\n{output}");
        Assert.Contains("tuning part (the rules were written from it): ", output, StringComparison.Ordinal);
        Assert.Contains("held-out part (gathered after the rules, read by the code unchanged): ", output, StringComparison.Ordinal);
        Assert.Equal(3, System.Text.RegularExpressions.Regex.Count(output, @"^  high +\d+ of +\d+ right \(\d+%; 95% lower bound \d+%\)$", System.Text.RegularExpressions.RegexOptions.Multiline));
    }

    [Fact]
    public async Task The_interleaved_hook_overhead_run_prints_its_ratios()
    {
        var info = BuiltProgram.StartInfo("MuxWatch.Benchmarks", "hook-overhead", "--rounds", "3", "--throws", "100");

        var (exitCode, output, error) = await BuiltProgram.RunAsync(info);

        Assert.True(exitCode == 0, $"exit {exitCode}: {error}");
        Assert.Contains("other exception type", output, StringComparison.Ordinal);
        Assert.Contains("RedisTimeoutException", output, StringComparison.Ordinal);
        Assert.Contains("floor: empty handler", output, StringComparison.Ordinal);
        Assert.Contains("new RedisTimeoutException", output, StringComparison.Ordinal);
        Assert.Equal(4, output.Split("ratio").Length - 1);
    }

    [Fact]
    public async Task The_app_cost_run_prints_every_variant_against_the_baseline()
    {
        var info = BuiltProgram.StartInfo("MuxWatch.Benchmarks", "app-cost", "--rounds", "1", "--ops", "2000", "--callers", "4");

        var (exitCode, output, error) = await BuiltProgram.RunAsync(info, timeout: TimeSpan.FromMinutes(2));

        Assert.True(exitCode == 0, $"exit {exitCode}: {error}\n{output}");
        foreach (var variant in (string[])["without MuxWatch", "MuxWatch, probe 1 s", "MuxWatch, probe 100 ms", "HealthChecks.Redis, 1 s"])
        {
            Assert.Contains(variant, output, StringComparison.Ordinal);
        }
    }

    [Fact]
    public async Task The_probe_scaling_run_prints_every_variant_and_the_render_cost()
    {
        var info = BuiltProgram.StartInfo("MuxWatch.Benchmarks", "probe-scaling", "--counts", "1,2", "--seconds", "1", "--rounds", "1", "--renders", "2", "--per-server", "2");

        var (exitCode, output, error) = await BuiltProgram.RunAsync(info, timeout: TimeSpan.FromMinutes(3));

        Assert.True(exitCode == 0, $"exit {exitCode}: {error}\n{output}");
        foreach (var variant in (string[])["floor (no MuxWatch)", "probe only", "probe + server polling", "half dead, + polling", "render /metrics"])
        {
            Assert.Contains(variant, output, StringComparison.Ordinal);
        }
    }

    [Fact]
    public async Task The_sidecar_scale_run_measures_the_service_and_the_peer_exporter()
    {
        var info = BuiltProgram.StartInfo("MuxWatch.Benchmarks", "sidecar-scale", "--counts", "2", "--settle-seconds", "1", "--scrapes", "2", "--gc", "default");

        var (exitCode, output, error) = await BuiltProgram.RunAsync(info, timeout: TimeSpan.FromMinutes(3));

        Assert.True(exitCode == 0, $"exit {exitCode}: {error}\n{output}");
        Assert.Contains("MuxWatch sidecar,   2 endpoints", output, StringComparison.Ordinal);
        Assert.Contains("redis_exporter", output, StringComparison.Ordinal); // test.sh installs prometheus-redis-exporter
    }

    [Fact]
    public async Task The_sidecar_fleet_run_measures_separate_endpoints_and_each_servers_cost_beside_the_exporter()
    {
        // Scaled down, the JIT build only (the native one is published by the benchmark itself, minutes of compiling).
        var info = BuiltProgram.StartInfo("MuxWatch.Benchmarks", "sidecar-fleet", "--counts", "1,2", "--builds", "jit", "--addresses", "2", "--keys", "10",
            "--warmup-seconds", "1", "--window-seconds", "2", "--scrapes", "2");
        info.Environment.Remove(BuiltProgram.ServiceExecutableVariable);

        var (exitCode, output, error) = await BuiltProgram.RunAsync(info, timeout: TimeSpan.FromMinutes(3));

        Assert.True(exitCode == 0, $"exit {exitCode}: {error}\n{output}");
        Assert.Contains("1 and 2 separate endpoints", output, StringComparison.Ordinal);
        Assert.Contains("what MuxWatch costs each endpoint's server", output, StringComparison.Ordinal);
        Assert.Contains("what redis_exporter costs each endpoint's server", output, StringComparison.Ordinal); // test.sh installs prometheus-redis-exporter

        // The one table: a row per build and count, the exporter's, the growth from the smaller count and the ratio to the exporter.
        Assert.Matches(@"(?m)^\| jit \| 1 \| [\d.]+ ms/s \|", output);
        Assert.Matches(@"(?m)^\| jit \| 2 \| [\d.]+ ms/s \|", output);
        Assert.Matches(@"(?m)^\| redis_exporter \(every 15 s\) \| 2 \|", output);
        Assert.Contains("jit, 1 to 2 endpoints (2 times): CPU x", output, StringComparison.Ordinal);
        Assert.Contains("MuxWatch (jit) against redis_exporter", output, StringComparison.Ordinal);

        // The goals as ratios of the run: the floor (prometheus-net alone, the same series) timed a scrape each in turn with
        // the sidecar, its series made family by family, then target by target as a running exporter makes them.
        Assert.Matches(@"in turns with prometheus-net alone \(dotnet, the same series made family by family, \d+ warm-up scrapes\), \d+ pairs: /metrics [\d.]+ ms median against [\d.]+, [\d.]+ times; \d+ blocks' ratios [\d.]+ to [\d.]+", output);
        Assert.Matches(@"in turns with prometheus-net alone \(dotnet, the same series made target by target, \d+ warm-up scrapes\), \d+ pairs: /metrics [\d.]+ ms median", output);
        // (A ratio is n/a where its denominator measured 0: an idle exporter's CPU over a 2 s window can.)
        Assert.Matches(@"goals, jit at 2: CPU / redis_exporter's ([\d.]+|n/a) \(at most 0\.33\); /metrics / prometheus-net alone built the same way [\d.]+ \(at most 1\.2\), / prometheus-net alone with the series made target by target [\d.]+; peak resident \d+ MB", output);
    }

    [Fact]
    public async Task The_idle_cost_run_prints_each_variants_cpu_beside_the_bare_app()
    {
        var info = BuiltProgram.StartInfo("MuxWatch.Benchmarks", "idle-cost", "--warmup", "2", "--measure", "1");

        var (exitCode, output, error) = await BuiltProgram.RunAsync(info, timeout: TimeSpan.FromMinutes(2));

        Assert.True(exitCode == 0, $"exit {exitCode}: {error}\n{output}");
        foreach (var variant in (string[])["bare", "muxwatch", "healthchecks"])
        {
            Assert.Matches($@"(?m)^  {variant} +\d+\.\d\d +-?\d+\.\d\d +\d+\.\d\d +-?\d+\.\d\d", output);
        }
    }

    [Fact]
    public async Task The_fork_projection_run_prints_a_ratio_for_every_grown_dataset()
    {
        var info = BuiltProgram.StartInfo("MuxWatch.Benchmarks", "fork-projection", "--steps", "20,200");

        var (exitCode, output, error) = await BuiltProgram.RunAsync(info, timeout: TimeSpan.FromMinutes(2));

        Assert.True(exitCode == 0, $"exit {exitCode}: {error}\n{output}");
        Assert.Matches(@"(?m)^ +20000 +- +\d+\.\d\d +- +-$", output); // the first save: nothing foretold it
        Assert.Matches(@"(?m)^ +200000 +\d+\.\d\d +\d+\.\d\d +\d+\.\d\d +\d+\.\d\d$", output);
    }

    [Fact]
    public async Task The_witness_cost_run_prints_every_phase()
    {
        var info = BuiltProgram.StartInfo("MuxWatch.Benchmarks", "witness-cost", "--warmup", "1", "--seconds", "1");

        var (exitCode, output, error) = await BuiltProgram.RunAsync(info, timeout: TimeSpan.FromMinutes(2));

        Assert.True(exitCode == 0, $"exit {exitCode}: {error}\n{output}");
        foreach (var phase in (string[])["no witness", "witness thread, no endpoint", "witness, one endpoint, quiet", "witness, one endpoint, busy"])
        {
            Assert.Matches($@"(?m)^  {phase} +\d+\.\d\d +\d+\.\d +\d+\.\d$", output);
        }
    }

    [Fact]
    public async Task The_hostile_memory_run_measures_every_shape_and_sees_it_refused()
    {
        var info = BuiltProgram.StartInfo("MuxWatch.Benchmarks", "hostile-memory", "--seconds", "1");

        var (exitCode, output, error) = await BuiltProgram.RunAsync(info, timeout: TimeSpan.FromMinutes(3));

        Assert.True(exitCode == 0, $"exit {exitCode}: {error}\n{output}");
        Assert.Matches(@"(?m)^  quiet +\d+ +\d+ +0 ", output);
        foreach (var shape in (string[])["info-10mb", "info-1m-fields", "errors-5mb"])
        {
            Assert.Matches($@"(?m)^  {shape} +\d+ +\d+ +[1-9]", output); // at least one poll refused as oversized
        }
    }
}
