using Microsoft.Extensions.Configuration;
using Microsoft.Extensions.DependencyInjection;
using MuxWatch.Pipeline;

namespace MuxWatch.Tests;

/// <summary>
/// The pipeline's order is declared, not left to registration: the read first, the facts, the rules, then MuxWatch's
/// correlating steps in <see cref="TimeoutPipeline.CorrelatingOrder"/> (each reads what the one before settled), and an
/// app's own step after MuxWatch's in its stage.
/// </summary>
public sealed class PipelineOrderTests
{
    private sealed class AppsOwnStep : ITimeoutStep
    {
        public TimeoutStepStage Stage => TimeoutStepStage.Correlate;

        public void Apply(TimeoutContext timeout)
        {
        }
    }

    [Fact]
    public void The_steps_run_in_the_declared_order_whatever_order_they_were_registered_in()
    {
        var collection = new ServiceCollection().AddLogging();
        collection.AddSingleton<IConfiguration>(new ConfigurationBuilder().Build()); // as every host provides
        collection.AddMuxWatch();
        using var services = collection.BuildServiceProvider();
        var registered = services.GetServices<ITimeoutStep>().ToList();

        foreach (var given in new[] { registered, Enumerable.Reverse(registered).ToList() })
        {
            var pipeline = new TimeoutPipeline([new AppsOwnStep(), .. given], []);
            var names = pipeline.Steps.Select(step => step.GetType().Name).ToList();

            Assert.Equal("ReadStep", names[0]);
            Assert.Equal(["ServerCorrelationStep", "RuntimeReasonStep", "PoolStacksStep", "HugeKeyStep", "AppsOwnStep"], names[^5..]);
            Assert.Equal("MessageRulesStep", names[^6]);
            Assert.All(names[1..^6], name => Assert.Contains(name, (string[])["ThreadPoolBeforeWaitStep", "RuntimeOverWaitStep", "LiveCountersStep"])); // facts, each on its own
        }
    }

    private sealed class Advising(AdviceRank rank, string text) : ITimeoutStep
    {
        public TimeoutStepStage Stage => TimeoutStepStage.Correlate;

        public void Apply(TimeoutContext timeout) => timeout.Advise(rank, text);
    }

    [Fact]
    public void The_final_advice_is_composed_once_the_culprit_first_then_the_kind_then_the_diagnosis_own()
    {
        // Steps only add; the pipeline composes after them all, whatever order they ran in.
        var pipeline = new TimeoutPipeline([new MessageRulesStep(), new Advising(AdviceRank.Kind, "kind. "), new Advising(AdviceRank.Culprit, "culprit. ")], []);

        var timeout = pipeline.Diagnose(new TimeoutObservation(DateTimeOffset.UnixEpoch, TimeoutSources.Api, TimeoutMessageReader.Read(
            "Timeout performing GET k (5000ms), inst: 0, qu: 0, qs: 1, in: 0, WORKER: (Busy=40,Free=32727,Min=8,Max=32767)")));

        Assert.Equal(TimeoutCause.ThreadPoolStarvation, timeout.Diagnosis.Cause);
        Assert.StartsWith("culprit. kind. ", timeout.Diagnosis.Advice, StringComparison.Ordinal);
        Assert.Equal(TimeoutPipeline.RulesOnly().Diagnose(new TimeoutObservation(DateTimeOffset.UnixEpoch, TimeoutSources.Api, TimeoutMessageReader.Read(
            "Timeout performing GET k (5000ms), inst: 0, qu: 0, qs: 1, in: 0, WORKER: (Busy=40,Free=32727,Min=8,Max=32767)"))).Diagnosis.Advice, timeout.Diagnosis.Advice["culprit. kind. ".Length..]);
    }
}
